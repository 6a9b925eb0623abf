import PeerNet

extension SimNetwork {
    /// Runs for `nanoseconds` while `impostors` (``Impostor``: fresh-peer heartbeats, every
    /// challenge answered, nothing else) speak to every node that is up, every `interval`: the
    /// open room's joiner nuisance, on top of whatever the scenario's `filter` does.
    package func run(forNanoseconds nanoseconds: UInt64, impostors: inout [Impostor], interval: UInt64 = 100_000_000) {
        let previous = filter
        var heard: [(to: PeerID, bytes: [UInt8])] = []
        filter = { packet in
            heard.append((packet.to, packet.bytes))
            return previous?(packet) ?? true
        }
        defer { filter = previous }
        let end = now.adding(nanoseconds: nanoseconds)
        while now < end {
            for node in nodes where node.isUp {
                for i in impostors.indices { inject(impostors[i].heartbeat(), to: node.peerID) }
            }
            let challenges = heard
            heard.removeAll()
            for (to, bytes) in challenges where node(to).isUp {
                for i in impostors.indices {
                    for answer in impostors[i].answers(to: bytes) { inject(answer, to: to) }
                }
            }
            run(until: min(end, now.adding(nanoseconds: interval)))
        }
    }
}
