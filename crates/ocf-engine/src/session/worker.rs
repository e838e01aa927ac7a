//! The session's workers: a thread whose stack holds [`crate::field::MAX_FIELD_DEPTH`] nested
//! field computations, shared by the sessions of a process ([`Pool`]), and a character's
//! database lent to it for one job ([`Lent`]). [`super::Session::deep`] sends the jobs.

use std::sync::Arc;

use crate::db::Database;

/// The stack of the thread sheets are computed on: room for [`crate::field::MAX_FIELD_DEPTH`]
/// nested field memos checked again after an edit (salsa's recursion, which can't grow the stack
/// where it runs low as a field computation does), a debug build's frames several times a release
/// build's. Reserved, not committed, until used; sized to the depth limit, not beyond it, so a
/// process under an address-space cap of 2 GB still has room (issue 35).
pub const DEEP_STACK: usize = if cfg!(debug_assertions) {
    256 << 20
} else {
    64 << 20
};

/// A character's database lent to the worker thread for one job, rather than a clone of it: a
/// clone is a new salsa handle whose query stack starts empty and grows again in every call
/// (about 7 % of an edit's instructions, issue 11), where the lent database keeps its own.
pub(super) struct Lent(pub(super) *const Database);

// SAFETY: `Database` is `Send` (checked below). The thread that lends it waits until the job has
// replied (`Session::deep`), touching neither the database nor any reference into it meanwhile,
// and no other thread holds one: were `Database` not `Sync`, the session that owns it couldn't be
// shared. The worker has it as if it had been moved there and back, one thread at a time.
unsafe impl Send for Lent {}

const _: () = {
    const fn sendable<T: Send>() {}
    sendable::<Database>();
};

impl Lent {
    /// # Safety
    /// Only while the lender waits for the job that holds it.
    pub(super) unsafe fn get(&self) -> &Database {
        // SAFETY: the lender keeps the database alive and untouched while it waits.
        unsafe { &*self.0 }
    }
}

/// A job for the worker thread.
pub(super) type Job = Box<dyn FnOnce() + Send>;

/// The threads with a deep stack that run the sessions' queries, shared by every session of the
/// process: each thread reserves [`DEEP_STACK`] of address space, so one per session made six open
/// sessions reserve 6 GiB (issue 35). A thread is started when a job finds none idle, up to the
/// machine's parallelism, so one caller at a time (a command line) has one, and a service's
/// callers on several threads still run side by side. A thread started is kept for later jobs
/// (spawning one costs about as much as recomputing a few fields).
pub(super) struct Pool {
    jobs: std::sync::Mutex<std::sync::mpsc::Sender<Job>>,
    queue: Arc<std::sync::Mutex<std::sync::mpsc::Receiver<Job>>>,
    /// Jobs sent whose caller hasn't had its answer yet, and threads started.
    busy: std::sync::atomic::AtomicUsize,
    started: std::sync::atomic::AtomicUsize,
    most: usize,
}

impl Pool {
    pub(super) fn get() -> &'static Pool {
        static POOL: std::sync::OnceLock<Pool> = std::sync::OnceLock::new();
        POOL.get_or_init(|| {
            let (jobs, queue) = std::sync::mpsc::channel::<Job>();
            Pool {
                jobs: std::sync::Mutex::new(jobs),
                queue: Arc::new(std::sync::Mutex::new(queue)),
                busy: std::sync::atomic::AtomicUsize::new(0),
                started: std::sync::atomic::AtomicUsize::new(0),
                most: std::thread::available_parallelism().map_or(2, |n| n.get()),
            }
        })
    }

    /// Queues `job`, starting a thread when more callers wait than there are threads; the
    /// caller calls [`Pool::done`] once it has its answer.
    pub(super) fn send(&self, job: Job) {
        use std::sync::atomic::Ordering::SeqCst;
        let busy = self.busy.fetch_add(1, SeqCst) + 1;
        let started = self.started.load(SeqCst);
        if busy > started && started < self.most {
            self.start();
        }
        let jobs = self.jobs.lock().unwrap_or_else(|e| e.into_inner());
        let _ = jobs.send(job);
    }

    pub(super) fn done(&self) {
        self.busy.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }

    pub(super) fn start(&self) {
        use std::sync::atomic::Ordering::SeqCst;
        let n = self.started.fetch_add(1, SeqCst);
        let queue = self.queue.clone();
        let spawned = std::thread::Builder::new()
            .name(format!("ocf-sheet-{n}"))
            .stack_size(DEEP_STACK)
            .spawn(move || {
                loop {
                    let job = {
                        let queue = queue.lock().unwrap_or_else(|e| e.into_inner());
                        queue.recv()
                    };
                    match job {
                        Ok(job) => job(),
                        Err(_) => break,
                    }
                }
            });
        if spawned.is_err() {
            // No thread could be made: the jobs wait for a running one, or run nowhere and
            // the caller's wait ends with the worker's stop (at least one thread must run).
            self.started.fetch_sub(1, SeqCst);
            assert!(n > 0, "spawning the sheet worker thread");
        }
    }
}

/// A session's access to the shared [`Pool`].
pub(super) struct Worker;

impl Worker {
    pub(super) fn start() -> Worker {
        Pool::get();
        Worker
    }

    pub(super) fn send(&self, job: Job) {
        Pool::get().send(job);
    }

    pub(super) fn done(&self) {
        Pool::get().done();
    }
}
