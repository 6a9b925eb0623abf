import PeerNet

/// Global safety checks over every node's event log (TigerBeetle's state checker).
///
/// A *life* is one incarnation of one node. Checked:
/// 1. Per life and sender: seqs strictly increase and have no gap, except across a view
///    change in which the sender or the life itself joined or departed.
/// 2. Per life: view ids strictly increase (until the life abandons its view: `.viewAbandoned`).
/// 3. Agreement: every life that installed the view (id, key) saw the same members and
///    joined/departed lists. (Ids alone are not unique across lineages: a group founded
///    afresh after its members all restarted counts from low ids again.)
/// 4. View synchrony: every life that installed W right after V, as a continuing member
///    (not listed in W's `joined`), delivered the same set of messages while in V.
public enum SimChecker {
    struct LifeKey: Hashable {
        var peer: PeerID
        var incarnation: UInt64
    }

    struct MessageID: Hashable, Comparable {
        var from: PeerID
        var seq: UInt64
        static func < (a: MessageID, b: MessageID) -> Bool { (a.from, a.seq) < (b.from, b.seq) }
    }

    /// Every violation found, as readable lines (empty when all holds).
    public static func violations(_ network: SimNetwork) -> [String] {
        var problems: [String] = []
        var viewsByID: [String: (MembershipView, LifeKey)] = [:]
        var transitions: [String: (Set<MessageID>, LifeKey)] = [:]
        for node in network.nodes {
            var lives: [UInt64: [SimRecord]] = [:]
            for record in node.log { lives[record.incarnation, default: []].append(record) }
            for (incarnation, records) in lives.sorted(by: { $0.key < $1.key }) {
                let life = LifeKey(peer: node.peerID, incarnation: incarnation)
                checkLife(life, records, &problems, &viewsByID, &transitions)
            }
        }
        return problems
    }

    private static func checkLife(
        _ life: LifeKey, _ records: [SimRecord], _ problems: inout [String],
        _ viewsByID: inout [String: (MembershipView, LifeKey)], _ transitions: inout [String: (Set<MessageID>, LifeKey)]
    ) {
        var last: [PeerID: UInt64] = [:]
        var current: MembershipView?
        var inView: Set<MessageID> = []
        for record in records {
            switch record.event {
            case let .delivered(d):
                if let prev = last[d.from], d.seq != prev + 1 {
                    problems.append("\(life.peer)/\(life.incarnation): from \(d.from) seq \(d.seq) after \(prev) at \(record.time)")
                }
                if current == nil { problems.append("\(life.peer)/\(life.incarnation): delivery before any view") }
                last[d.from] = d.seq
                let id = MessageID(from: d.from, seq: d.seq)
                if !inView.insert(id).inserted { problems.append("\(life.peer)/\(life.incarnation): \(id) delivered twice") }
            case let .viewChanged(v):
                if let old = current {
                    if v.id <= old.id { problems.append("\(life.peer)/\(life.incarnation): view \(v.id) after \(old.id)") }
                }
                // Synchrony binds the members that move on together; a peer that (re)joins
                // the new view left its old one without a flush.
                if let old = current, !v.joined.contains(life.peer) {
                    let key = "\(old.id)/\(old.key):\(old.members)->\(v.id)/\(v.key):\(v.members)"
                    if let (other, otherLife) = transitions[key] {
                        if other != inView {
                            let onlyHere = inView.subtracting(other).sorted().prefix(5)
                            let onlyThere = other.subtracting(inView).sorted().prefix(5)
                            problems.append("view synchrony \(key): \(life.peer)/\(life.incarnation) vs \(otherLife.peer)/\(otherLife.incarnation): only here \(Array(onlyHere)), only there \(Array(onlyThere))")
                        }
                    } else {
                        transitions[key] = (inView, life)
                    }
                }
                let identity = "\(v.id)/\(v.key)"
                if let (other, otherLife) = viewsByID[identity], other != v {
                    problems.append("views disagree on \(identity): \(life.peer) has \(v), \(otherLife.peer) has \(other)")
                } else {
                    viewsByID[identity] = (v, life)
                }
                for p in v.joined + v.departed { last[p] = nil }
                if v.joined.contains(life.peer) { last = [:] }
                current = v
                inView = []
            case .viewAbandoned:
                // The life starts over like a fresh peer: a new lineage of views and streams.
                current = nil
                last = [:]
                inView = []
            case .incompatible, .lagging, .incarnationEnded, .resumedAfterPause, .idCollision, .receiversWaiting:
                break
            }
        }
    }
}
