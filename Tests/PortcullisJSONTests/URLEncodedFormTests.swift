import PortcullisJSON
import Testing

/// `application/x-www-form-urlencoded` as the API's forms are read.
@Suite("URL-encoded forms")
struct URLEncodedFormTests {
    @Test("+ is a space and %XX a byte; the first of a repeated name wins; empty pairs and values are kept apart")
    func decoding() {
        let fields = URLEncodedForm.fields(
            Array("&grant_type=refresh_token&refresh_token=pr2.a%2Eb%2Bc&note=two+words%21&grant_type=second&&empty=&bare".utf8))
        #expect(
            fields == [
                "grant_type": "refresh_token", "refresh_token": "pr2.a.b+c", "note": "two words!", "empty": "", "bare": "",
            ])
        #expect(URLEncodedForm.fields(Array("name%3Dwith%26=%C3%A9t%C3%A9=x".utf8)) == ["name=with&": "été=x"])
        #expect(URLEncodedForm.fields(Array("q=two+words".utf8)) == ["q": "two words"])
        #expect(URLEncodedForm.fields([]) == [:])
    }

    @Test(
        "a broken escape or bytes that are not UTF-8 make the whole form unreadable",
        arguments: ["a=%zz", "a=%4", "a=%", "a=%C3", "%FF=x", "a=b&c=%E2%82"])
    func refusals(body: String) {
        #expect(URLEncodedForm.fields(Array(body.utf8)) == nil)
    }

    @Test("raw bytes that are not UTF-8 are refused, even without an escape")
    func rawInvalidUTF8() {
        #expect(URLEncodedForm.fields([UInt8(ascii: "a"), UInt8(ascii: "="), 0xC3]) == nil)
        #expect(URLEncodedForm.fields([0xFF, UInt8(ascii: "="), UInt8(ascii: "b")]) == nil)
    }
}
