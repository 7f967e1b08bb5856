/// Jobs queued per owner and taken fairly: the next job is the oldest of the owner with the
/// fewest jobs running, the one that has waited longest for its turn among equals. An
/// owner with a hundred jobs waiting gets no more threads than an owner with one while
/// both wait, and all of them when it is alone.
///
/// The hashing pool's queue (DESIGN.md §5, fairness): one tenant's flood of sign-ins waits
/// behind its own jobs, never in front of another tenant's, and a quiet tenant's hash takes
/// the first thread that frees up rather than the second.
struct FairQueue<Owner: Hashable, Job> {
    /// Each owner's waiting jobs, oldest first; an owner with none has no entry.
    private var waiting: [Owner: [Job]] = [:]
    /// The owners with jobs waiting, the longest waiting for its turn first.
    private var turns: [Owner] = []
    /// Each owner's jobs taken and not yet finished; an owner with none has no entry.
    private var running: [Owner: Int] = [:]

    /// The jobs waiting, every owner's.
    private(set) var count = 0

    /// Owners with no job running and one waiting: `next()` takes their jobs first.
    var newcomers: Int { turns.count { running[$0] == nil } }

    /// Queues `job` behind `owner`'s others.
    mutating func append(_ job: Job, for owner: Owner) {
        if waiting[owner, default: []].isEmpty { turns.append(owner) }
        waiting[owner, default: []].append(job)
        count += 1
    }

    /// Takes the next job (see the type's discussion); its owner goes to the back of the
    /// turns if it has more waiting. Call `finished(_:)` when the job is done.
    mutating func next() -> (owner: Owner, job: Job)? {
        // The first of the least busy owners: `min(by:)` keeps the earliest of equal ones.
        guard let turn = turns.indices.min(by: { running[turns[$0], default: 0] < running[turns[$1], default: 0] }) else {
            return nil
        }
        let owner = turns.remove(at: turn)
        guard var jobs = waiting.removeValue(forKey: owner), !jobs.isEmpty else { return nil }
        let job = jobs.removeFirst()
        if !jobs.isEmpty {
            waiting[owner] = jobs
            turns.append(owner)
        }
        count -= 1
        running[owner, default: 0] += 1
        return (owner, job)
    }

    /// One job of `owner` taken by `next()` is done.
    mutating func finished(_ owner: Owner) {
        let left = running[owner, default: 1] - 1
        running[owner] = left > 0 ? left : nil
    }
}
