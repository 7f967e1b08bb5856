import PortcullisCore
import Testing

@Suite("Continue URLs, read as browsers read them")
struct ContinueURLTests {
    static let authorizedDomains = ["app.example.com", "bücher.example", "xn--r8jz45g.xn--zckzah"]
    static let invalid = AuthError(.invalidContinueUri)
    static let unauthorized = AuthError(.unauthorizedDomain, detail: "Domain not allowlisted by project")

    /// One `continueUrl` and what the policy makes of it: the URL it stores, or its error.
    struct Case: Sendable, CustomTestStringConvertible {
        let input: String
        let expected: Result<String, AuthError>
        var testDescription: String {
            input.count > 80 ? "\(input.prefix(40).debugDescription)… (\(input.utf8.count) bytes)" : input.debugDescription
        }

        static func accepted(_ input: String, as href: String) -> Case { Case(input: input, expected: .success(href)) }
        static func refused(_ input: String, _ error: AuthError) -> Case { Case(input: input, expected: .failure(error)) }
    }

    @Test(
        "the host checked is the host a browser goes to, and the URL stored is the one checked",
        arguments: [
            // `\` is `/` to a browser: the authority ends there.
            Case.refused("https://attacker.example\\@localhost/after", unauthorized),
            .accepted("https://localhost\\@attacker.example/", as: "https://localhost/@attacker.example/"),
            .accepted("https://app.example.com\\@attacker.example/", as: "https://app.example.com/@attacker.example/"),
            .refused("https:\\\\attacker.example/x", unauthorized),
            .refused("https:/\\attacker.example", unauthorized),
            .refused("https:attacker.example", unauthorized),
            .accepted("https:app.example.com/x", as: "https://app.example.com/x"),
            .accepted("https:////app.example.com///x", as: "https://app.example.com///x"),
            .refused("https://attacker.example#@app.example.com/", unauthorized),
            .refused("https://attacker.example?@app.example.com/", unauthorized),
            // Userinfo, up to the last `@`, is refused outright, even empty.
            .refused("https://user:pw@app.example.com/", invalid),
            .refused("https://app.example.com@attacker.example/", invalid),
            .refused("https://app.example.com%2F@attacker.example/", invalid),
            .refused("https://a@b@app.example.com/", invalid),
            .refused("https://@app.example.com/", invalid),
            // Controls and spaces around it are stripped, tabs and newlines inside removed.
            .accepted("  https://app.example.com/a  ", as: "https://app.example.com/a"),
            .accepted("ht\ttps://app.exa\nmple.com/", as: "https://app.example.com/"),
            .accepted("\u{1F} https://app.example.com/\r\n", as: "https://app.example.com/"),
            // Hosts are percent-decoded, mapped to ASCII, lower-cased.
            .refused("https://%61ttacker.example/", unauthorized),
            .accepted("https://%61pp.example.com/", as: "https://app.example.com/"),
            .accepted("https://app%2Eexample.com/", as: "https://app.example.com/"),
            .refused("https://attacker.example%2F.app.example.com/", invalid),
            .refused("https://attacker.example%00.app.example.com/", invalid),
            .accepted("https://app．example.com/", as: "https://app.example.com/"),
            .accepted("https://app。example.com/", as: "https://app.example.com/"),
            .accepted("https://ａｐｐ.example.com/", as: "https://app.example.com/"),
            .refused("https://ÄPP.example.com/", unauthorized),
            .accepted("https://BÜCHER.example/x", as: "https://xn--bcher-kva.example/x"),
            .accepted("https://xn--bcher-kva.example/", as: "https://xn--bcher-kva.example/"),
            .accepted("https://shop.例え.テスト/", as: "https://shop.xn--r8jz45g.xn--zckzah/"),
            .refused("https://xn--a.example/", invalid),
            // Only the allowed domains and their subdomains.
            .accepted("https://deep.app.example.com/x", as: "https://deep.app.example.com/x"),
            .accepted("https://auth.example.net/after", as: "https://auth.example.net/after"),
            .accepted("HTTP://LOCALHOST:3000", as: "http://localhost:3000/"),
            .refused("https://app.example.com.attacker.example/", unauthorized),
            .refused("https://evil-app.example.com/", unauthorized),
            .refused("https://example.com/", unauthorized),
            .refused("https://app.example.com./", unauthorized),
            .refused("http://0x7f.1/", unauthorized),
            // Ports: the default one dropped, anything but 0…65535 in decimal refused.
            .accepted("https://app.example.com:443/", as: "https://app.example.com/"),
            .accepted("https://app.example.com:00000000000000000443/", as: "https://app.example.com/"),
            .accepted("https://app.example.com:80/", as: "https://app.example.com:80/"),
            .accepted("https://app.example.com:/", as: "https://app.example.com/"),
            .refused("https://app.example.com:99999/", invalid),
            .refused("https://app.example.com:65536/", invalid),
            .refused("https://app.example.com:0x50/", invalid),
            // Paths resolved and every component encoded as a browser encodes it.
            .accepted("https://APP.Example.COM/Path?q=1#f", as: "https://app.example.com/Path?q=1#f"),
            .accepted("https://app.example.com/a/./b/../c", as: "https://app.example.com/a/c"),
            .accepted("https://app.example.com/%2e%2e/x", as: "https://app.example.com/x"),
            .accepted("https://app.example.com\\a\\b", as: "https://app.example.com/a/b"),
            .accepted("https://app.example.com/a b?c d#e f", as: "https://app.example.com/a%20b?c%20d#e%20f"),
            .accepted("https://app.example.com/<a>\"?<q>\"'#<f>\"`", as: "https://app.example.com/%3Ca%3E%22?%3Cq%3E%22%27#%3Cf%3E%22%60"),
            .accepted("https://app.example.com/ä?ä#ä", as: "https://app.example.com/%C3%A4?%C3%A4#%C3%A4"),
            // Not an absolute http(s) URL with a host.
            .refused("javascript:alert(1)", invalid),
            .refused("data:text/html,<script>alert(1)</script>", invalid),
            .refused("ftp://app.example.com/", invalid),
            .refused("//app.example.com/x", invalid),
            .refused("/relative", invalid),
            .refused("", invalid),
            .refused("https://", invalid),
            .refused("https://:443/", invalid),
            .refused("https://[::1]/", invalid),
            .refused("https://app.example.com/" + String(repeating: "a", count: 2025), invalid),
        ])
    func policy(_ test: Case) throws {
        let validate = { () throws(AuthError) in
            try ContinueURLPolicy.validate(test.input, authorizedDomains: Self.authorizedDomains, publicURL: "https://auth.example.net")
        }
        switch test.expected {
        case .success(let href): #expect(try validate() == href)
        case .failure(let error): #expect(throws: error) { try validate() }
        }
    }

    @Test("input of up to 2048 UTF-8 bytes is read, longer input is refused")
    func length() throws {
        let longest = "https://app.example.com/" + String(repeating: "é", count: 1012)
        #expect(longest.utf8.count == 2048)
        let accepted = try ContinueURLPolicy.validate(longest, authorizedDomains: [], publicURL: "https://app.example.com")
        #expect(accepted == "https://app.example.com/" + String(repeating: "%C3%A9", count: 1012))
        #expect(throws: Self.invalid) {
            try ContinueURLPolicy.validate(longest + "a", authorizedDomains: [], publicURL: "https://app.example.com")
        }
    }

    @Test("an IPv4 address is allowed only as itself, whatever form the URL writes it in")
    func ipv4() throws {
        for form in ["http://127.0.0.1:8080/x", "http://0x7f.1:8080/x", "http://2130706433:8080/x", "http://0177.0.0.1:8080/x"] {
            let accepted = try ContinueURLPolicy.validate(form, authorizedDomains: ["127.0.0.1"], publicURL: "https://auth.example.net")
            #expect(accepted == "http://127.0.0.1:8080/x")
        }
        #expect(throws: Self.unauthorized) {
            // `0.0.1` is the address 0.0.0.1, of which 10.0.0.1 is no "subdomain".
            try ContinueURLPolicy.validate("http://10.0.0.1/", authorizedDomains: ["0.0.1"], publicURL: "https://auth.example.net")
        }
    }
}

@Suite("Continue URLs: the WHATWG URL parser")
struct ContinueURLParserTests {
    @Test(
        "http(s) URLs serialise as a browser's href; nil where a browser fails",
        arguments: [
            ("https://attacker.example\\@localhost/after", "https://attacker.example/@localhost/after"),
            ("https://app.example.com@attacker.example/", "https://app.example.com@attacker.example/"),
            ("https://ÄPP.example.com/", "https://xn--pp-uia.example.com/"),
            ("https://bücher.example/", "https://xn--bcher-kva.example/"),
            ("https://例え.テスト/", "https://xn--r8jz45g.xn--zckzah/"),
            ("http://0x7f.1/", "http://127.0.0.1/"),
            ("http://2130706433/", "http://127.0.0.1/"),
            ("http://127.1/", "http://127.0.0.1/"),
            ("http://0177.0.0.1/", "http://127.0.0.1/"),
            ("http://1.127.0.0.1/", nil),
            ("https://app.example.com/a/%2E%2e/b", "https://app.example.com/b"),
            ("https://app.example.com/..", "https://app.example.com/"),
            ("https://app.example.com?", "https://app.example.com/?"),
            ("https://app.example.com#", "https://app.example.com/#"),
            // The current standard encodes `^` in paths (browsers before it: `/^|`).
            ("https://app.example.com/^|", "https://app.example.com/%5E|"),
            // From web-platform-tests, url/resources/urltestdata.json.
            ("http://example.com/foo/%2e./%2e%2e/.%2e/%2e.bar", "http://example.com/%2e.bar"),
            ("http://example.com////../..", "http://example.com//"),
            ("http://example.com\\\\foo\\\\bar", "http://example.com//foo//bar"),
            ("http://example.com/foo%2\u{C2}\u{A9}zbar", "http://example.com/foo%2%C3%82%C2%A9zbar"),
            ("http:\\\\www.google.com\\foo", "http://www.google.com/foo"),
            ("http://www.@pple.com", "http://www.@pple.com/"),
            ("http:a:@www.example.com", "http://a@www.example.com/"),
            ("http:/:@/www.example.com", nil),
            ("http://@:www.example.com", nil),
            ("\u{0}\u{1B}\u{4}\u{12} http://example.com/\u{1F} \r ", "http://example.com/"),
            ("h\tt\nt\rp://h\to\ns\rt:9\t0\n0\r0/p\ta\nt\rh?q\tu\ne\rry#f\tr\na\rg", "http://host:9000/path?query#frag"),
            ("http://foo:-80/", nil),
            ("http://192.0x00A80001", "http://192.168.0.1/"),
            ("https://0x.0x.0", "https://0.0.0.0/"),
            ("http://0x7f.0.0.0x7g", "http://0x7f.0.0.0x7g/"),
            ("https://0x100000000/test", nil),
            ("http://1.2.3.08", nil),
            ("http://foo.09", nil),
            ("http://foo.09..", "http://foo.09../"),
            ("http://ho%3Ast/", nil),
            ("http://a^b", nil),
            ("http://!\"$&'()*+,-.;=_`{}~/", "http://!\"$&'()*+,-.;=_`{}~/"),
            ("https://x/\u{0}y", "https://x/%00y"),
            (
                "https://www.example.com/path{\u{7F}path.html?query'\u{7F}=query#fragment<\u{7F}fragment",
                "https://www.example.com/path%7B%7Fpath.html?query%27%7F=query#fragment%3C%7Ffragment"
            ),
            ("http://example.com/你好你好", "http://example.com/%E4%BD%A0%E5%A5%BD%E4%BD%A0%E5%A5%BD"),
            ("http://a.b.c.xn--pokxncvks", nil),
            ("https://xn--/", nil),
        ] as [(String, String?)])
    func href(input: String, expected: String?) {
        let url = BrowserURL(input)
        #expect(url?.serialized == expected)
        // What the parser writes reads back as itself: one URL, whatever reads it next.
        if let href = url?.serialized { #expect(BrowserURL(href)?.serialized == href) }
    }

    @Test("the parts of a URL")
    func parts() throws {
        let url = try #require(BrowserURL("HTTPS://a:b:c@Host.Example:8443\\x/./y/../z?q r#f g"))
        #expect(url.scheme == "https")
        #expect(url.username == "a")
        #expect(url.password == "b%3Ac")
        #expect(url.hasUserinfo)
        #expect(url.host == .domain("host.example"))
        #expect(url.port == 8443)
        #expect(url.path == "/x/z")
        #expect(url.query == "q%20r")
        #expect(url.fragment == "f%20g")
        let bare = try #require(BrowserURL("http://@127.1"))
        #expect(bare.hasUserinfo && bare.username.isEmpty && bare.password.isEmpty)
        #expect(bare.host == .ipv4(0x7F00_0001))
        #expect(bare.port == nil)
        #expect(bare.query == nil)
        #expect(bare.fragment == nil)
        #expect(bare.serialized == "http://127.0.0.1/")
    }

    @Test(
        "domains map to ASCII as IDNA maps them (Punycode for non-ASCII labels)",
        arguments: [
            ("bücher.example", "xn--bcher-kva.example"),
            ("例え.テスト", "xn--r8jz45g.xn--zckzah"),
            ("ÄPP.Example.com", "xn--pp-uia.example.com"),
            ("app｡example.com", "app.example.com"),
            ("ＡＰＰ．ＥＸＡＭＰＬＥ．ＣＯＭ", "app.example.com"),
            ("Xn--Bcher-Kva.Example", "xn--bcher-kva.example"),
            ("münchen.de", "xn--mnchen-3ya.de"),
            ("правительство.рф", "xn--80aealotwbjpid2k.xn--p1ai"),
            ("中文.com", "xn--fiq228c.com"),
            ("e\u{301}.example", "xn--9ca.example"),
        ] as [(String, String)])
    func idna(domain: String, ascii: String) {
        #expect(BrowserURL.Host(domain) == .domain(ascii))
    }

    @Test(
        "refused rather than guessed: IPv6, and non-ASCII outside the subset mapped exactly",
        arguments: [
            "https://[::1]/", "http://[0:1:0:1:0:1:0:1]/", "https://faß.example/", "https://a%C2%ADb/", "https://%e2%98%83",
            "https://مثال.example/", "https://a\u{200D}b.example/", "https://\u{301}a.example/", "https://⒈.example/",
            "https://xn--8i7caa.example/",
        ])
    func refused(input: String) {
        #expect(BrowserURL(input) == nil)
    }
}
