"""Calls the gateway from a page on another origin in headless Chromium, as Firebase's web SDK does.

Usage: browser_cross_origin.py <gateway base URL> <API key> <project id> <tenant id> <admin key> <chromium> <chromedriver>

Serves an empty page on http://localhost:<free port> (another origin than the gateway's
http://127.0.0.1:<port>), then runs fetch() from it with the SDK's headers, which makes the
browser send a preflight first: a sign-up, the same sign-up again (its error envelope must be
readable), a refresh through the emulator-style securetoken prefix, and a request to the admin
API carrying a valid admin key, which the browser must refuse to hand to the page. Prints a JSON
summary for the Swift test to check.
"""
import http.server
import json
import sys
import threading

import headless_chromium

base, api_key, project, tenant, admin_key, chromium, chromedriver = sys.argv[1:8]


class Page(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b"<!doctype html><title>app</title>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
threading.Thread(target=server.serve_forever, daemon=True).start()

SCRIPT = """
const [base, key, project, tenant, adminKey, done] = arguments;
const sdk = {'X-Client-Version': 'Chrome/JsCore/11.0.0/FirebaseCore-web', 'X-Firebase-gmpid': '1:1:web:1'};
async function call(path, init) {
  try {
    const response = await fetch(base + path, init);
    return {status: response.status, body: await response.json()};
  } catch (error) {
    return {blocked: String(error)};
  }
}
(async () => {
  const out = {};
  const headers = Object.assign({'Content-Type': 'application/json'}, sdk);
  const body = JSON.stringify({email: 'browser@example.com', password: 'correct horse', returnSecureToken: true, tenantId: tenant});
  const up = await call(`/v1/accounts:signUp?key=${key}`, {method: 'POST', headers, body});
  out.sign_up = {status: up.status || null, has_token: !!(up.body && up.body.idToken), blocked: up.blocked || null};
  const again = await call(`/v1/accounts:signUp?key=${key}`, {method: 'POST', headers, body});
  out.again = {status: again.status || null, message: again.body && again.body.error ? again.body.error.message : null};
  const refresh = await call(`/securetoken.googleapis.com/v1/token?key=${key}`, {
    method: 'POST', headers: Object.assign({'Content-Type': 'application/x-www-form-urlencoded'}, sdk),
    body: 'grant_type=refresh_token&refresh_token=' + encodeURIComponent(up.body ? up.body.refreshToken : '')});
  out.refresh = {status: refresh.status || null, has_token: !!(refresh.body && refresh.body.id_token)};
  const admin = await call(`/v2/projects/${project}/tenants`, {headers: {'Authorization': 'Bearer ' + adminKey}});
  out.admin = {blocked: !!admin.blocked, status: admin.status || null};
  done(out);
})();
"""

driver = headless_chromium.start(chromium, chromedriver)
try:
    driver.set_script_timeout(30)
    driver.get(f"http://localhost:{server.server_address[1]}/")
    print(json.dumps(driver.execute_async_script(SCRIPT, base, api_key, project, tenant, admin_key)))
finally:
    driver.quit()
    server.shutdown()
