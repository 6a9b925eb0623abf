import EggPrimitives
import Foundation
import HeapModule
import PeerNet

/// The deterministic simulated network (after TigerBeetle's packet simulator).
///
/// Every `PeerNet` node of a match runs in one process against a virtual clock. One options
/// struct with one seed drives every fault: loss, duplication (replay), per-packet delay
/// (reordering falls out of it), partitions and healing, crashes and restarts (a restart is a
/// new `ReliableMulticast` with the same `PeerID` and a higher incarnation).
///
/// Drive it with `step()` (jumps the clock to the earliest packet arrival or timer),
/// `run(until:)`, or `runUntilConverged(...)` (liveness phase: faults off, require convergence).
/// Attach an application to each node with `SimApplication` (the consensus layer does).

/// Every knob of the simulated network. `swarm(seed:)` derives them all from the seed.
public struct SimOptions: Sendable, CustomStringConvertible {
    public var seed: UInt64
    public var peerCount: Int
    /// Probability that a datagram to one receiver is lost (own loopback copies are never lost).
    public var lossProbability: Double
    /// Probability that a delivered datagram is delivered a second time (later).
    public var replayProbability: Double
    public var delayMinNanoseconds: UInt64
    /// Mean of the exponential delay added to `delayMinNanoseconds`.
    public var delayMeanNanoseconds: UInt64
    /// Faults are drawn every `faultTickNanoseconds` while faults are enabled.
    public var faultTickNanoseconds: UInt64
    public var partitionProbability: Double
    public var unpartitionProbability: Double
    public var crashProbability: Double
    public var restartProbability: Double
    /// Passed to every node's config.
    public var passphrase: String?
    // The knobs below default off (0), and a knob at 0 draws nothing from the seed's generator,
    // so every seed replays exactly as before they existed.
    /// Packets in flight on one path (sender → receiver) at most; one more is dropped and counted
    /// in `SimNetwork.packetsDroppedCapacity`. 0: no limit.
    public var pathCapacityMax = 0
    /// Per fault tick and path (sender → receiver), the probability that the path clogs: what is
    /// on it, or sent on it, waits until it unclogs, after an exponential time of mean
    /// `pathClogMeanNanoseconds`.
    public var pathClogProbability: Double = 0
    public var pathClogMeanNanoseconds: UInt64 = 200_000_000
    /// The probability that a partition the fault tick draws is one-way: the second group still
    /// hears the first, the first no longer hears the second.
    public var partitionAsymmetricProbability: Double = 0
    /// In the liveness phase (`runUntilConverged`), the probability that a crashed node stays
    /// down for good instead of restarting (the rest must converge without it).
    public var permanentCrashProbability: Double = 0

    public init(
        seed: UInt64, peerCount: Int = 3, lossProbability: Double = 0, replayProbability: Double = 0,
        delayMinNanoseconds: UInt64 = 200_000, delayMeanNanoseconds: UInt64 = 1_000_000,
        faultTickNanoseconds: UInt64 = 100_000_000, partitionProbability: Double = 0,
        unpartitionProbability: Double = 0, crashProbability: Double = 0, restartProbability: Double = 0,
        passphrase: String? = nil
    ) {
        self.seed = seed
        self.peerCount = peerCount
        self.lossProbability = lossProbability
        self.replayProbability = replayProbability
        self.delayMinNanoseconds = delayMinNanoseconds
        self.delayMeanNanoseconds = delayMeanNanoseconds
        self.faultTickNanoseconds = faultTickNanoseconds
        self.partitionProbability = partitionProbability
        self.unpartitionProbability = unpartitionProbability
        self.crashProbability = crashProbability
        self.restartProbability = restartProbability
        self.passphrase = passphrase
    }

    /// Knobs drawn from the seed: 2…`peerCountMax` peers, loss ≤ 30 %, replay ≤ 20 %,
    /// mean delay 0.1…30 ms; partitions and crashes only when `withFaults`.
    public static func swarm(seed: UInt64, peerCountMax: Int = 8, withFaults: Bool = false) -> SimOptions {
        var rng = SimRandom(seed: seed ^ 0x5157_4152_4D00_0000)
        var o = SimOptions(seed: seed)
        o.peerCount = 2 + Int(rng.next(upTo: UInt64(peerCountMax - 2)))
        o.lossProbability = Double(rng.next(upTo: 30)) / 100
        o.replayProbability = Double(rng.next(upTo: 20)) / 100
        o.delayMinNanoseconds = 100_000 + rng.next(upTo: 900_000)
        o.delayMeanNanoseconds = 100_000 + rng.next(upTo: 30_000_000)
        if withFaults {
            o.partitionProbability = Double(rng.next(upTo: 5)) / 100
            o.unpartitionProbability = Double(5 + rng.next(upTo: 20)) / 100
            o.crashProbability = Double(rng.next(upTo: 3)) / 100
            o.restartProbability = Double(5 + rng.next(upTo: 20)) / 100
        }
        return o
    }

    public var description: String {
        "SEED=\(seed) peers=\(peerCount) loss=\(lossProbability) replay=\(replayProbability) "
            + "delay_min_ns=\(delayMinNanoseconds) delay_mean_ns=\(delayMeanNanoseconds) "
            + "partition=\(partitionProbability) unpartition=\(unpartitionProbability) "
            + "crash=\(crashProbability) restart=\(restartProbability) fault_tick_ns=\(faultTickNanoseconds)"
            + (pathCapacityMax > 0 ? " path_capacity_max=\(pathCapacityMax)" : "")
            + (pathClogProbability > 0 ? " path_clog=\(pathClogProbability) path_clog_mean_ns=\(pathClogMeanNanoseconds)" : "")
            + (partitionAsymmetricProbability > 0 ? " partition_asymmetric=\(partitionAsymmetricProbability)" : "")
            + (permanentCrashProbability > 0 ? " permanent_crash=\(permanentCrashProbability)" : "")
    }
}

/// SplitMix64 plus the draws the simulator needs. Same numbers on every platform.
public struct SimRandom: Sendable {
    private var inner: SplitMix64

    public init(seed: UInt64) { inner = SplitMix64(seed: seed) }

    public mutating func next() -> UInt64 { inner.next() }

    /// A draw in `0...bound`.
    public mutating func next(upTo bound: UInt64) -> UInt64 { inner.next(upTo: bound) }

    /// `true` with probability `p`.
    public mutating func chance(_ p: Double) -> Bool { p > 0 && unit() < p }

    /// Uniform in [0, 1).
    public mutating func unit() -> Double { Double(next() >> 11) / Double(UInt64(1) << 53) }

    /// Exponentially distributed with the given mean.
    public mutating func exponential(mean: UInt64) -> UInt64 {
        let u = max(unit(), 1e-12)
        return UInt64(min(-log(u) * Double(mean), Double(mean) * 50))
    }
}

/// An application running on a simulated node (e.g. the consensus layer). It may call
/// `core.send` from any hook. The simulator calls `handle(event:)` for every event of the
/// node's core, in order, and `handleTimeout` when `pollTimeout` is due.
public protocol SimApplication: AnyObject {
    func handle(event: PeerNetEvent, core: ReliableMulticast, now: NetTime)
    func pollTimeout() -> NetTime?
    func handleTimeout(core: ReliableMulticast, now: NetTime)
}

extension SimApplication {
    public func pollTimeout() -> NetTime? { nil }
    public func handleTimeout(core: ReliableMulticast, now: NetTime) {}
}

/// One event as a node's life recorded it.
public struct SimRecord: Hashable, Sendable {
    public var time: NetTime
    public var peer: PeerID
    public var incarnation: UInt64
    public var event: PeerNetEvent
}

/// A simulated peer: its current core (nil while crashed), its app and its event log.
public final class SimNode {
    public let peerID: PeerID
    public private(set) var incarnation: UInt64 = 0
    public private(set) var core: ReliableMulticast?
    public private(set) var app: SimApplication?
    /// Every event of every incarnation, in order.
    public private(set) var log: [SimRecord] = []
    public var isUp: Bool { core != nil }
    /// Cached `min(core.pollTimeout(), app.pollTimeout())`, refreshed after every input to this node.
    fileprivate var cachedTimeout: NetTime?
    fileprivate var cacheValid = false
    /// Its place in `SimNetwork.nodes`, and the network that schedules it.
    fileprivate var index = 0
    fileprivate weak var network: SimNetwork?
    /// Whether it is listed in the network's `timerToFile` and `outputToSend`.
    fileprivate var timerTouched = false
    fileprivate var outputTouched = false
    /// Bumped whenever its timer is filed again: a filed entry with an older stamp is stale.
    fileprivate var timerStamp: UInt64 = 0
    /// Whether `log` records events (`SimNetwork.recordsEvents`).
    fileprivate var records = true
    /// Whether its socket would drop receivers' datagrams in the kernel (it is a receiver):
    /// the network does not deliver them to it, as a real socket filter would not wake it.
    fileprivate var dropsReceiverDatagrams = false

    /// The earliest timer of the core and the app (cached between inputs).
    fileprivate var nextTimeout: NetTime? {
        if !cacheValid {
            cacheValid = true
            let a = core?.pollTimeout()
            let b = app?.pollTimeout()
            cachedTimeout = [a, b].compactMap { $0 }.min()
        }
        return cachedTimeout
    }

    /// An input reached it (a datagram, a timer, a boot, a crash): its timer may have moved and
    /// it may have datagrams to send.
    fileprivate func invalidate() {
        cacheValid = false
        guard let network else { return }
        if !timerTouched {
            timerTouched = true
            network.timerToFile.append(index)
        }
        if !outputTouched {
            outputTouched = true
            network.outputToSend.append(index)
        }
    }

    init(peerID: PeerID) { self.peerID = peerID }

    fileprivate func boot(config: PeerNetConfig, app: SimApplication?, now: NetTime) {
        invalidate()
        incarnation = config.incarnation
        core = ReliableMulticast(config: config, now: now)
        dropsReceiverDatagrams = config.receiveOnly
        self.app = app
    }

    fileprivate func crash() {
        invalidate()
        core = nil
        app = nil
    }

    fileprivate func drainEvents(now: NetTime) {
        invalidate()
        guard let core else { return }
        while let event = core.pollEvent() {
            if records { log.append(SimRecord(time: now, peer: peerID, incarnation: incarnation, event: event)) }
            app?.handle(event: event, core: core, now: now)
        }
    }
}

/// A datagram in flight to one node.
public struct SimPacket: Sendable {
    public var from: PeerID
    public var to: PeerID
    public var bytes: [UInt8]
    public var readyAt: NetTime
    fileprivate var order: UInt64
}

/// The simulated multicast network.
public final class SimNetwork {
    public let options: SimOptions
    public private(set) var now: NetTime = .zero
    public private(set) var nodes: [SimNode]
    /// While true, `options`' partitions, crashes and restarts are drawn every fault tick.
    public var faultsEnabled = false
    /// Scenario hook: return `false` to drop this packet (called once per receiver, before loss).
    public var filter: ((SimPacket) -> Bool)?
    /// Network-level loss and replay apply only while true (the liveness phase turns them off).
    public var lossEnabled = true

    private var rng: SimRandom
    private var inFlight = Heap<ScheduledPacket>()
    private var packetOrder: UInt64 = 0
    private var groupOf: [PeerID: Int] = [:]
    /// Whether the partition in `groupOf` is one-way (see `partition(_:symmetric:)`).
    private var partitionIsOneWay = false
    /// Packets scheduled per path and not delivered yet (only counted with a path capacity).
    private var inFlightPerPath: [SimPath: Int] = [:]
    /// Clogged paths and when each unclogs.
    private var cloggedUntil: [SimPath: NetTime] = [:]
    /// Nodes the liveness phase left down for good.
    public private(set) var permanentlyDown: Set<PeerID> = []
    /// Packets dropped because their path was at `pathCapacityMax`.
    public private(set) var packetsDroppedCapacity: UInt64 = 0
    private var nextFaultAt: NetTime = .zero
    private let makeConfig: (PeerID, UInt64) -> PeerNetConfig
    private let makeApp: (PeerID, UInt64) -> SimApplication?
    private var incarnationCounter: UInt64 = 0
    public private(set) var packetsDelivered: UInt64 = 0
    /// Whether every node's `log` records its events (off for swarms of thousands of nodes,
    /// whose logs would not fit in memory).
    public var recordsEvents = true {
        didSet { for node in nodes { node.records = recordsEvents } }
    }
    /// Node indices by ID.
    private var indexOf: [PeerID: Int] = [:]
    /// Nodes an input reached since their timer was last filed, and since their output was last
    /// sent (`SimNode.invalidate()`). Only these can have moved a timer or queued a datagram, so
    /// a step costs what it touches, not the number of nodes.
    fileprivate var timerToFile: [Int] = []
    fileprivate var outputToSend: [Int] = []
    /// Every node's next timer, earliest first; an entry whose stamp is not its node's
    /// `timerStamp` is stale and skipped.
    private var timers = Heap<SimTimer>()

    /// - Parameters:
    ///   - options: the knobs and the seed.
    ///   - peerIDs: the node IDs (default 1…`options.peerCount`).
    ///   - start: whether to boot every node at time zero.
    ///   - config: each node's config for (ID, incarnation); the default uses the seed and passphrase.
    ///   - app: each life's application, if any.
    public init(
        options: SimOptions, peerIDs: [PeerID]? = nil, start: Bool = true,
        config: ((PeerID, UInt64) -> PeerNetConfig)? = nil,
        app: @escaping (PeerID, UInt64) -> SimApplication? = { _, _ in nil }
    ) {
        self.options = options
        self.rng = SimRandom(seed: options.seed)
        let ids = peerIDs ?? (1...max(1, options.peerCount)).map { PeerID(UInt64($0)) }
        self.nodes = ids.map(SimNode.init(peerID:))
        let seed = options.seed
        let passphrase = options.passphrase
        self.makeConfig = config ?? { id, incarnation in
            PeerNetConfig(peerID: id, incarnation: incarnation, passphrase: passphrase,
                          randomSeed: seed &* 31 &+ id.raw &* 0x1000_0001 &+ incarnation)
        }
        self.makeApp = app
        for (index, node) in nodes.enumerated() {
            node.index = index
            node.network = self
            indexOf[node.peerID] = index
        }
        if start { for node in nodes { boot(node) } }
    }

    public func node(_ id: PeerID) -> SimNode {
        guard let index = indexOf[id] else { preconditionFailure("no node \(id)") }
        return nodes[index]
    }

    /// Adds a node (booted now) to the network, e.g. a late joiner.
    @discardableResult
    public func addNode(_ id: PeerID) -> SimNode {
        precondition(!nodes.contains { $0.peerID == id }, "node exists")
        let node = SimNode(peerID: id)
        node.index = nodes.count
        node.network = self
        node.records = recordsEvents
        indexOf[id] = nodes.count
        nodes.append(node)
        boot(node)
        return node
    }

    private func boot(_ node: SimNode) {
        incarnationCounter += 1
        let incarnation = max(node.incarnation + 1, incarnationCounter)
        node.boot(config: makeConfig(node.peerID, incarnation), app: makeApp(node.peerID, incarnation), now: now)
    }

    // MARK: - Faults as commands

    /// Crashes a node: its core and app are gone; packets to it are lost.
    public func crash(_ id: PeerID) { node(id).crash() }

    /// Restarts a crashed (or running) node under the same ID with a higher incarnation.
    public func restart(_ id: PeerID) {
        let n = node(id)
        n.crash()
        boot(n)
    }

    /// Splits the network: nodes in different groups cannot hear each other. Unlisted nodes form
    /// one more group (group 0). A one-way partition (`symmetric: false`) cuts only one direction:
    /// a node hears every node of its own group and of the groups listed after its own, so
    /// `partition([[a], [b]], symmetric: false)` lets b hear a, and a no longer hear b.
    public func partition(_ groups: [[PeerID]], symmetric: Bool = true) {
        groupOf = [:]
        partitionIsOneWay = !symmetric
        for (index, group) in groups.enumerated() { for id in group { groupOf[id] = index + 1 } }
    }

    public func heal() {
        groupOf = [:]
        partitionIsOneWay = false
    }

    public var isPartitioned: Bool { !groupOf.isEmpty }

    /// Clogs the path from `from` to `to` for `nanoseconds`: its packets wait, none is lost.
    public func clog(from: PeerID, to: PeerID, forNanoseconds nanoseconds: UInt64) {
        cloggedUntil[SimPath(from: from, to: to)] = now.adding(nanoseconds: nanoseconds)
    }

    /// Whether `receiver` hears `sender` now (partitions only; clogs delay, they do not cut).
    public func connected(from sender: PeerID, to receiver: PeerID) -> Bool {
        let a = groupOf[sender] ?? 0, b = groupOf[receiver] ?? 0
        return a == b || (partitionIsOneWay && a < b)
    }

    // MARK: - Driving

    /// Processes everything due at the next point in time, jumping the clock to it.
    /// - Returns: `false` when nothing at all is scheduled.
    @discardableResult
    public func step() -> Bool {
        touchAll()
        return step(notAfter: nil)
    }

    /// Marks every node's output to be sent: the caller may have used any core directly since
    /// the last step (a test sending), which no input reported. Timers stay as filed until the
    /// node's next input, as the cached timeouts of a scan of every node did.
    private func touchAll() {
        for node in nodes where !node.outputTouched {
            node.outputTouched = true
            outputToSend.append(node.index)
        }
    }

    /// `step()`, unless the next point in time is after `deadline` (then nothing happens).
    private func step(notAfter deadline: NetTime?) -> Bool {
        flushOutputs()
        guard let t = nextTime() else { return false }
        if let deadline, t > deadline { return false }
        now = max(now, t)
        if faultsEnabled, now >= nextFaultAt {
            drawFaults()
            nextFaultAt = now.adding(nanoseconds: options.faultTickNanoseconds)
        }
        while var packet = inFlight.min?.packet, packet.readyAt <= now {
            inFlight.removeMin()
            let path = SimPath(from: packet.from, to: packet.to)
            if let until = cloggedUntil[path], until > now {
                packet.readyAt = until
                inFlight.insert(ScheduledPacket(packet: packet))
                continue
            }
            if options.pathCapacityMax > 0 { inFlightPerPath[path, default: 1] -= 1 }
            let node = node(packet.to)
            guard let core = node.core else { continue }
            packetsDelivered += 1
            core.handleDatagram(packet.bytes, now: now)
            node.drainEvents(now: now)
        }
        // The nodes whose timer is due, in node order (as a scan of every node would take them).
        fileTimers()
        var due: [Int] = []
        while let entry = timers.min, entry.time <= now {
            timers.removeMin()
            if entry.stamp == nodes[entry.index].timerStamp { due.append(entry.index) }
        }
        due.sort()
        for index in due {
            let node = nodes[index]
            // Filed again at the next step, whether or not a handler below runs.
            node.invalidate()
            guard let due = node.nextTimeout, due <= now else { continue }
            if let core = node.core, let t = core.pollTimeout(), t <= now {
                core.handleTimeout(now: now)
                node.drainEvents(now: now)
            }
            if let core = node.core, let app = node.app, let t = app.pollTimeout(), t <= now {
                app.handleTimeout(core: core, now: now)
                node.drainEvents(now: now)
            }
        }
        flushOutputs()
        return true
    }

    /// Steps until the clock passes `deadline` (or nothing is scheduled).
    public func run(until deadline: NetTime) {
        touchAll()
        while now < deadline {
            guard step(notAfter: deadline) else { now = deadline; return }
        }
    }

    public func run(forNanoseconds duration: UInt64) { run(until: now.adding(nanoseconds: duration)) }

    private func nextTime() -> NetTime? {
        var next = inFlight.min?.packet.readyAt
        func consider(_ t: NetTime?) { if let t, next == nil || t < next! { next = t } }
        fileTimers()
        while let entry = timers.min, entry.stamp != nodes[entry.index].timerStamp { timers.removeMin() }
        consider(timers.min?.time)
        if faultsEnabled { consider(nextFaultAt) }
        return next
    }

    /// Files the timer of every touched node again (its output must be sent first: `flushOutputs`).
    private func fileTimers() {
        for index in timerToFile {
            let node = nodes[index]
            node.timerTouched = false
            node.timerStamp &+= 1
            if let t = node.nextTimeout { timers.insert(SimTimer(time: t, index: index, stamp: node.timerStamp)) }
        }
        timerToFile.removeAll(keepingCapacity: true)
    }

    /// Liveness phase: faults and loss off, partitions healed, crashed nodes restarted if asked;
    /// then runs until `converged` holds or `timeoutNanoseconds` pass.
    /// - Returns: whether the network converged in time.
    public func runUntilConverged(
        timeoutNanoseconds: UInt64 = 30_000_000_000, restartCrashed: Bool = true,
        extra: (SimNetwork) -> Bool = { _ in true }
    ) -> Bool {
        faultsEnabled = false
        lossEnabled = false
        filter = nil
        heal()
        cloggedUntil = [:]
        if restartCrashed {
            for node in nodes where !node.isUp && !permanentlyDown.contains(node.peerID) {
                if rng.chance(options.permanentCrashProbability) {
                    permanentlyDown.insert(node.peerID)
                } else {
                    restart(node.peerID)
                }
            }
        }
        let deadline = now.adding(nanoseconds: timeoutNanoseconds)
        while now < deadline {
            if converged && extra(self) { return true }
            run(forNanoseconds: 50_000_000)
        }
        return converged && extra(self)
    }

    /// Every running node is a member of one and the same view holding exactly the running
    /// nodes, nothing is queued, and every node delivered every member's last message.
    public var converged: Bool {
        let up = nodes.compactMap(\.core)
        guard let first = up.first else { return true }
        let ids = nodes.filter(\.isUp).map(\.peerID).sorted()
        for core in up {
            guard core.status == .member, core.view == first.view, core.view.members == ids, core.pendingSendCount == 0
            else { return false }
        }
        let upNodes = nodes.filter(\.isUp)
        for receiver in upNodes {
            for sender in upNodes where receiver.core!.deliveredUpTo(sender.peerID) != sender.core!.lastSentSeq {
                return false
            }
        }
        return true
    }

    /// What ``finish(drainNanoseconds:)`` found undelivered (after swift-nio's
    /// `EmbeddedChannel.finish()`, whose `.leftOvers` fail a test that left data unread).
    public struct Leftovers: Equatable, Sendable, CustomStringConvertible {
        /// "sender → receiver: n" for every running sender whose messages a running member of
        /// its view has not all delivered.
        public var undelivered: [String]
        /// Own messages the running nodes assigned a seq but have not sent (queued during a view
        /// change or while blocked).
        public var unsentMessages: Int

        public var isClean: Bool { undelivered.isEmpty && unsentMessages == 0 }

        public var description: String {
            isClean ? "clean" : "\(unsentMessages) unsent messages; undelivered: \(undelivered.joined(separator: ", "))"
        }
    }

    /// Ends the run: faults, loss, partitions and clogs off (crashed nodes stay down), then steps
    /// for at most `drainNanoseconds` until every running node delivered every message of every
    /// running member of its view; returns what is still undelivered. A test expects
    /// `finish().isClean`, so a message that never arrives fails it even when nobody checked.
    public func finish(drainNanoseconds: UInt64 = 5_000_000_000) -> Leftovers {
        faultsEnabled = false
        lossEnabled = false
        filter = nil
        heal()
        cloggedUntil = [:]
        let deadline = now.adding(nanoseconds: drainNanoseconds)
        while now < deadline && !leftovers().isClean { run(forNanoseconds: min(10_000_000, deadline.nanoseconds(since: now))) }
        return leftovers()
    }

    private func leftovers() -> Leftovers {
        let up = nodes.filter(\.isUp)
        var undelivered: [String] = []
        for sender in up {
            let sent = sender.core!.lastSentSeq
            for receiver in up where receiver.core!.view.members.contains(sender.peerID) {
                let missing = sent - min(sent, receiver.core!.deliveredUpTo(sender.peerID) ?? 0)
                if missing > 0 { undelivered.append("\(sender.peerID) → \(receiver.peerID): \(missing)") }
            }
        }
        return Leftovers(undelivered: undelivered, unsentMessages: up.reduce(0) { $0 + $1.core!.pendingSendCount })
    }

    /// Hands a datagram straight to one node's core (fuzzing, forged traffic).
    public func inject(_ bytes: [UInt8], to id: PeerID) {
        let node = node(id)
        node.core?.handleDatagram(bytes, now: now)
        node.drainEvents(now: now)
    }

    // MARK: - Internals

    /// Sends what the touched nodes queued, in node order (as a scan of every node would).
    private func flushOutputs() {
        guard !outputToSend.isEmpty else { return }
        let indices = outputToSend.sorted()
        outputToSend.removeAll(keepingCapacity: true)
        for index in indices {
            nodes[index].outputTouched = false
            guard let core = nodes[index].core else { continue }
            while let bytes = core.pollTransmit() { multicast(bytes, from: nodes[index].peerID) }
        }
    }

    private func multicast(_ bytes: [UInt8], from sender: PeerID) {
        // A receiver's datagram (flagged) reaches no receiver: their sockets filter it out
        // before any read, so it draws no loss, delay or replay for them either.
        let fromReceiver = ReliableMulticast.isFromReceiver(bytes)
        for receiver in nodes where !(fromReceiver && receiver.dropsReceiverDatagrams) && connected(from: sender, to: receiver.peerID) {
            var packet = SimPacket(from: sender, to: receiver.peerID, bytes: bytes, readyAt: now, order: 0)
            if let filter, !filter(packet) { continue }
            let loopback = receiver.peerID == sender
            if lossEnabled, !loopback, rng.chance(options.lossProbability) { continue }
            packet.readyAt = now.adding(nanoseconds: delay())
            schedule(packet)
            if lossEnabled, !loopback, rng.chance(options.replayProbability) {
                packet.readyAt = now.adding(nanoseconds: delay() * 2)
                schedule(packet)
            }
        }
    }

    private func delay() -> UInt64 {
        options.delayMinNanoseconds + rng.exponential(mean: options.delayMeanNanoseconds)
    }

    private func schedule(_ packet: SimPacket) {
        var packet = packet
        if options.pathCapacityMax > 0 {
            let path = SimPath(from: packet.from, to: packet.to)
            guard inFlightPerPath[path, default: 0] < options.pathCapacityMax else {
                packetsDroppedCapacity += 1
                return
            }
            inFlightPerPath[path, default: 0] += 1
        }
        packetOrder += 1
        packet.order = packetOrder
        inFlight.insert(ScheduledPacket(packet: packet))
    }

    private func drawFaults() {
        if isPartitioned {
            if rng.chance(options.unpartitionProbability) { heal() }
        } else if nodes.count >= 2, rng.chance(options.partitionProbability) {
            var groups: [[PeerID]] = [[], []]
            for node in nodes { groups[Int(rng.next(upTo: 1))].append(node.peerID) }
            partition(groups, symmetric: !rng.chance(options.partitionAsymmetricProbability))
        }
        if options.pathClogProbability > 0 {
            cloggedUntil = cloggedUntil.filter { $0.value > now }
            for from in nodes {
                for to in nodes where to.peerID != from.peerID && rng.chance(options.pathClogProbability) {
                    clog(from: from.peerID, to: to.peerID, forNanoseconds: rng.exponential(mean: options.pathClogMeanNanoseconds))
                }
            }
        }
        let up = nodes.filter(\.isUp)
        if up.count > 1, rng.chance(options.crashProbability) {
            crash(up[Int(rng.next(upTo: UInt64(up.count - 1)))].peerID)
        }
        let down = nodes.filter { !$0.isUp }
        if !down.isEmpty, rng.chance(options.restartProbability) {
            restart(down[Int(rng.next(upTo: UInt64(down.count - 1)))].peerID)
        }
    }
}

/// A node's next timer as filed in the network's heap (ties broken by node index).
struct SimTimer: Comparable {
    var time: NetTime
    var index: Int
    var stamp: UInt64

    static func < (a: SimTimer, b: SimTimer) -> Bool { (a.time, a.index) < (b.time, b.index) }
}

/// One direction between two nodes.
struct SimPath: Hashable {
    var from: PeerID
    var to: PeerID
}

/// A packet in flight, ordered by (readyAt, order): `order` is unique, so ties break the same
/// way on every run.
struct ScheduledPacket: Comparable {
    var packet: SimPacket

    static func < (a: ScheduledPacket, b: ScheduledPacket) -> Bool {
        (a.packet.readyAt, a.packet.order) < (b.packet.readyAt, b.packet.order)
    }

    static func == (a: ScheduledPacket, b: ScheduledPacket) -> Bool { a.packet.order == b.packet.order }
}
