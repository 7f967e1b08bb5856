import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Closes a connection whose request body is not read whole within `timeout` of its
/// first byte.
///
/// Hummingbird's idle timeout restarts with every part read, so a client trickling a
/// body one byte at a time would hold its connection (and a body buffer) forever; a
/// slow header, or a body that never starts, is covered by the idle timeout, which no
/// part resets until the head is complete. The timer starts at the first body part, so
/// requests without a body — every forward-auth check — schedule none.
final class RequestTimeoutHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart

    private let timeout: TimeAmount
    private var deadline: Scheduled<Void>?

    init(timeout: TimeAmount) {
        self.timeout = timeout
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            break
        case .body:
            if deadline == nil {
                let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
                deadline = context.eventLoop.scheduleTask(in: timeout) { loopBound.value.close(promise: nil) }
            }
        case .end:
            deadline?.cancel()
            deadline = nil
        }
        context.fireChannelRead(data)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
        context.fireChannelInactive()
    }
}
