"""The headless Chromium the browser checks drive (Debian's chromium and chromium-driver)."""
from selenium import webdriver
from selenium.webdriver.chrome.service import Service


def start(chromium, chromedriver):
    """A WebDriver session on a headless Chromium that runs as root in a container."""
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(argument)
    return webdriver.Chrome(service=Service(chromedriver), options=options)
