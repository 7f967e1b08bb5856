"""Completes a password reset on the gateway's action page in headless Chromium.

Usage: action_page_reset.py <action link> <weak password> <new password> <chromium> <chromedriver>

Opens the link, submits a weak password (the page must announce the refusal in a
role="alert" element tied to the field), then the new one, and waits for the browser
to leave the page. Prints a JSON summary for the Swift test to check.
"""
import json
import sys

import headless_chromium
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

link, weak, password, chromium, chromedriver = sys.argv[1:6]
driver = headless_chromium.start(chromium, chromedriver)
try:
    driver.get(link)
    summary = {
        "heading": driver.find_element(By.TAG_NAME, "h1").text,
        "label": driver.find_element(By.CSS_SELECTOR, "label[for=newPassword]").text,
        "lang": driver.find_element(By.TAG_NAME, "html").get_attribute("lang"),
    }
    driver.find_element(By.ID, "newPassword").send_keys(weak)
    driver.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    alert = WebDriverWait(driver, 10).until(lambda d: d.find_elements(By.CSS_SELECTOR, "[role=alert]"))
    summary["alert"] = alert[0].text
    summary["described_by"] = driver.find_element(By.ID, "newPassword").get_attribute("aria-describedby")
    driver.find_element(By.ID, "newPassword").send_keys(password)
    driver.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    WebDriverWait(driver, 10).until(lambda d: "/__/auth/action" not in d.current_url)
    summary["final_url"] = driver.current_url
    print(json.dumps(summary))
finally:
    driver.quit()
