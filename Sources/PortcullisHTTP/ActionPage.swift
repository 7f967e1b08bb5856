import HTTPTypes
import Hummingbird
import NIOCore
import PortcullisCore

/// The HTML of the action page (`/__/auth/action`): small, server-rendered, no script,
/// usable with a keyboard and a screen reader (one `main`, a heading per page, labelled
/// fields, errors announced with `role="alert"`).
enum ActionPage {
    /// The hidden fields a form posts back: the link's, and the token bound to its code.
    struct FormState {
        var mode: String
        var oobCode: String
        var apiKey: String
        var tenantId: String?
        var languageCode: String?
        var token: String

        /// The hidden inputs carrying this state.
        var hiddenInputs: String {
            var inputs = [("mode", mode), ("oobCode", oobCode), ("apiKey", apiKey), ("token", token)]
            if let tenantId { inputs.append(("tenantId", tenantId)) }
            if let languageCode { inputs.append(("lang", languageCode)) }
            return inputs.map { "<input type=\"hidden\" name=\"\($0)\" value=\"\(escape($1))\">" }.joined(separator: "\n")
        }
    }

    /// A page saying what happened, with a link onwards when there is somewhere to go; a
    /// failure's text is announced (`role="alert"`).
    static func message(title: String, text: String, continueURL: String? = nil, status: HTTPResponse.Status = .ok) -> Response {
        var content = status == .ok ? "<p>\(escape(text))</p>" : "<p role=\"alert\">\(escape(text))</p>"
        if let continueURL { content += "<p><a href=\"\(escape(continueURL))\">Continue</a></p>" }
        return page(title: title, content: content, status: status)
    }

    /// What a verification or email change will do, and the one button that does it.
    static func confirmForm(title: String, text: String, button: String, state: FormState) -> Response {
        let content = """
            <p>\(escape(text))</p>
            <form method="post" action="\(ActionLink.path)">
            \(state.hiddenInputs)
            <button type="submit">\(escape(button))</button>
            </form>
            """
        return page(title: title, content: content, status: .ok)
    }

    /// The new-password form of a reset.
    static func resetForm(email: String, state: FormState, error: String? = nil) -> Response {
        var content = "<p>for <strong>\(escape(email))</strong></p>"
        if let error { content += "<p id=\"error\" class=\"error\" role=\"alert\">\(escape(error))</p>" }
        content += """
            <form method="post" action="\(ActionLink.path)">
            \(state.hiddenInputs)
            <label for="newPassword">New password</label>
            <input id="newPassword" name="newPassword" type="password" autocomplete="new-password" required\
            \(error == nil ? "" : " aria-describedby=\"error\" aria-invalid=\"true\"") autofocus>
            <button type="submit">Save</button>
            </form>
            """
        return page(title: "Reset your password", content: content, status: error == nil ? .ok : .badRequest)
    }

    private static func page(title: String, content: String, status: HTTPResponse.Status) -> Response {
        let html = """
            <!doctype html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(escape(title))</title>
            <style>
            body { font-family: system-ui, sans-serif; max-width: 30rem; margin: 3rem auto; padding: 0 1rem; line-height: 1.5; }
            label { display: block; margin-top: 1rem; font-weight: 600; }
            input { width: 100%; padding: .5rem; font-size: 1rem; box-sizing: border-box; }
            button { margin-top: 1rem; padding: .6rem 1.2rem; font-size: 1rem; }
            .error { color: #a00000; font-weight: 600; }
            </style>
            </head>
            <body>
            <main>
            <h1>\(escape(title))</h1>
            \(content)
            </main>
            </body>
            </html>

            """
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: html)))
    }

    /// The page's URL holds the code: no referrer, no cache, no framing, no script.
    static var headers: HTTPFields {
        [
            .contentType: "text/html; charset=utf-8",
            .cacheControl: "no-store",
            HTTPField.Name("Referrer-Policy")!: "no-referrer",  // safe: constant, valid
            HTTPField.Name("X-Content-Type-Options")!: "nosniff",  // safe: constant, valid
            .contentSecurityPolicy: "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'",
        ]
    }

    /// Text made safe for HTML content and quoted attributes.
    static func escape(_ text: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            default: escaped.append(character)
            }
        }
        return escaped
    }
}
