import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Answers `Expect: 100-continue` at once, so a client waiting to send its body (curl waits
/// a second) sends it straight away.
///
/// A body the server will refuse anyway (a `Content-Length` over the limit) gets no
/// `100 Continue`: ``PortcullisResponder`` answers 413 from the head alone, and the
/// client never sends it.
final class ExpectContinueHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundOut = HTTPResponsePart

    private let maximumBodyBytes: Int

    init(maximumBodyBytes: Int) {
        self.maximumBodyBytes = maximumBodyBytes
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head(let head) = unwrapInboundIn(data), head.headerFields[.expect]?.lowercased() == "100-continue",
            (head.headerFields[.contentLength].flatMap { Int($0) } ?? 0) <= maximumBodyBytes
        {
            context.writeAndFlush(wrapOutboundOut(.head(HTTPResponse(status: .continue))), promise: nil)
        }
        context.fireChannelRead(data)
    }
}
