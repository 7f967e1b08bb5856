import PortcullisCore
import PortcullisJSON

extension JSONValue {
    /// The array at `path`, empty when absent.
    func list(at path: [String]) -> [JSONValue] {
        if case .array(let items)? = value(at: path) { return items }
        return []
    }

    /// The string at `path`.
    func string(at path: [String]) -> String? {
        if case .string(let text)? = value(at: path) { return text }
        return nil
    }
}
