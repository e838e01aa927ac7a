//! A load on `ocf serve` over loopback, as many apps would put on it: clients, each editing its own
//! character, one edit after another over a connection it keeps (HTTP/1.1 keep-alive, as an app's
//! HTTP client does), each made against the revision the last one answered. The
//! service can be killed (SIGKILL) and restarted part way; a client whose answer was lost reads the
//! character again and counts its edit done only if the store has it. Shared by the test (small,
//! asserting nothing is lost or doubled) and the benchmark (figures for docs/perf.md).
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `ocf serve` as a process of its own over a store (a SQLite file by default).
pub struct Server {
    child: Child,
    pub addr: SocketAddr,
    store: String,
}

impl Server {
    pub fn start(store: &Path, addr: SocketAddr) -> Server {
        Server::start_on(&format!("sqlite:{}", store.display()), addr)
    }

    /// `ocf serve --store URL`.
    pub fn start_on(store: &str, addr: SocketAddr) -> Server {
        // `OCF_LOAD_LOGS=DIR` keeps each instance's log (`RUST_LOG=warn,ocf_service=info`) in `DIR/serve-<port>.log`.
        let log = std::env::var_os("OCF_LOAD_LOGS").map(|dir| {
            let path = Path::new(&dir).join(format!("serve-{}.log", addr.port()));
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .expect("the log file opens")
        });
        let mut command = Command::new(env!("CARGO_BIN_EXE_ocf"));
        command.env_remove("RUST_LOG");
        if log.is_some() {
            command.env("RUST_LOG", "warn,ocf_service=info");
        }
        let child = command
            .args([
                "serve",
                "--addr",
                &addr.to_string(),
                "--packs",
                "testdata/packs/5e-srd-5.1",
            ])
            .args(["--store", store])
            .current_dir(repo())
            .stdout(Stdio::null())
            .stderr(log.map_or_else(Stdio::null, Stdio::from))
            .spawn()
            .expect("ocf serve starts");
        let started = Instant::now();
        while TcpStream::connect(addr).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "ocf serve did not listen"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        Server {
            child,
            addr,
            store: store.to_owned(),
        }
    }

    /// The CPU time the process has used (user and system), where the system tells it.
    pub fn cpu(&self) -> Option<Duration> {
        cpu_of(&format!("/proc/{}/stat", self.child.id()))
    }

    /// The process's resident memory in bytes (`VmRSS`), where the system tells it.
    pub fn resident(&self) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).ok()?;
        let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
        let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kib * 1024)
    }

    /// Kills the process at once (no shutdown of its own) and starts it again on the same
    /// address and store.
    pub fn kill_and_restart(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        *self = Server::start_on(&self.store.clone(), self.addr);
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The user and system CPU time of the process whose `/proc/…/stat` is `path` (in the kernel's
/// ticks, taken as 100 a second).
fn cpu_of(path: &str) -> Option<Duration> {
    let stat = std::fs::read_to_string(path).ok()?;
    // The fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
    let mut fields = stat.rsplit_once(')')?.1.split_whitespace().skip(11);
    let user: u64 = fields.next()?.parse().ok()?;
    let system: u64 = fields.next()?.parse().ok()?;
    Some(Duration::from_millis((user + system) * 10))
}

pub fn free_addr() -> SocketAddr {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
}

/// One request: the status and the JSON body, or `None` when the connection failed (the server
/// is down or died mid-answer).
pub fn request(addr: SocketAddr, method: &str, path: &str, body: &str) -> Option<(u16, Value)> {
    let mut stream = TcpStream::connect(addr).ok()?;
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .ok()?;
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .ok()?;
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).ok()?;
    let answer = String::from_utf8(answer).ok()?;
    let (head, rest) = answer.split_once("\r\n\r\n")?;
    let status: u16 = head.split(' ').nth(1)?.parse().ok()?;
    Some((status, serde_json::from_str(rest).ok()?))
}

/// A client's connection, kept between its requests (HTTP/1.1 keep-alive), as an app's HTTP
/// client keeps it: a request costs neither side a TCP connection. A request whose connection
/// fails is answered `None` (its answer may have been lost after the write was stored: the caller
/// reads the store to tell) and the next one connects again; nothing is sent twice.
pub struct Client {
    addr: SocketAddr,
    kept: Option<BufReader<TcpStream>>,
}

impl Client {
    pub fn new(addr: SocketAddr) -> Client {
        Client { addr, kept: None }
    }

    /// One request: the status and the JSON body, or `None` when the connection failed.
    pub fn request(&mut self, method: &str, path: &str, body: &str) -> Option<(u16, Value)> {
        let answer = self.exchange(method, path, body);
        if answer.is_none() {
            self.kept = None;
        }
        answer
    }

    fn exchange(&mut self, method: &str, path: &str, body: &str) -> Option<(u16, Value)> {
        if self.kept.is_none() {
            let stream = TcpStream::connect(self.addr).ok()?;
            stream
                .set_read_timeout(Some(Duration::from_secs(30)))
                .ok()?;
            stream.set_nodelay(true).ok()?;
            self.kept = Some(BufReader::new(stream));
        }
        let reader = self.kept.as_mut()?;
        let request = format!(
            "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        reader.get_mut().write_all(request.as_bytes()).ok()?;
        let mut line = String::new();
        reader.read_line(&mut line).ok()?;
        let status: u16 = line.split(' ').nth(1)?.parse().ok()?;
        let (mut length, mut close) = (None, false);
        loop {
            line.clear();
            reader.read_line(&mut line).ok()?;
            let header = line.trim_end();
            if header.is_empty() {
                break;
            }
            let (name, value) = header.split_once(':')?;
            let value = value.trim();
            if name.eq_ignore_ascii_case("content-length") {
                length = Some(value.parse::<usize>().ok()?);
            } else if name.eq_ignore_ascii_case("connection") && value.eq_ignore_ascii_case("close")
            {
                close = true;
            }
        }
        let mut answer = Vec::new();
        match length {
            Some(length) => {
                answer.resize(length, 0);
                reader.read_exact(&mut answer).ok()?;
            }
            // No length: the answer runs to the connection's end.
            None => {
                reader.read_to_end(&mut answer).ok()?;
                close = true;
            }
        }
        if close {
            self.kept = None;
        }
        Some((status, serde_json::from_slice(&answer).ok()?))
    }
}

#[derive(Debug, Default)]
pub struct Report {
    /// Each acknowledged edit's latency, from its first attempt to its acknowledgement (with the
    /// conflicts' re-reads and retries between).
    pub latencies: Vec<Duration>,
    /// Each PUT's latency, acknowledged or refused `conflict`.
    pub attempts: Vec<Duration>,
    /// PUTs refused `conflict` (another writer of the character was first).
    pub conflicts: usize,
    /// Edits whose answer was lost to a kill and found in the store afterwards.
    pub recovered: usize,
    /// Per client: the final stored value and revision.
    pub finals: Vec<(i64, u64)>,
    pub elapsed: Duration,
    /// The CPU time the service's instances used during the run (none when one was killed: its
    /// time went with it).
    pub service_cpu: Option<Duration>,
    /// The CPU time the clients (this process) used during the run.
    pub client_cpu: Option<Duration>,
}

impl Report {
    pub fn percentile(&self, p: f64) -> Duration {
        percentile(&self.latencies, p)
    }

    /// The `p` percentile of one PUT, acknowledged or not.
    pub fn attempt_percentile(&self, p: f64) -> Duration {
        percentile(&self.attempts, p)
    }
}

fn percentile(latencies: &[Duration], p: f64) -> Duration {
    let mut sorted = latencies.to_vec();
    sorted.sort();
    sorted
        .get(((sorted.len() as f64 - 1.0) * p).round() as usize)
        .copied()
        .unwrap_or_default()
}

const FIELD: &str = "hp.current";

/// `clients` threads, each creating `load-<i>` and setting its hit points to 1, 2, … `edits`; with
/// `kill_after`, the server is killed and restarted once that many edits are acknowledged.
pub fn run(server: Server, clients: usize, edits: usize, kill_after: Option<usize>) -> Report {
    run_shared(server, clients, 1, edits, kill_after)
}

/// `clients` threads in groups of `writers`, each group editing one character (`load-<i>`, `i` the
/// group): each writer makes `edits` acknowledged edits, retrying on `conflict` against the
/// revision it reads again. With one writer each edit sets the hit points to 1, 2, … `edits`.
pub fn run_shared(
    server: Server,
    clients: usize,
    writers: usize,
    edits: usize,
    kill_after: Option<usize>,
) -> Report {
    run_on(vec![server], clients, writers, edits, kill_after, None)
}

/// [`run_shared`] over several instances of the service on one store: client `i` sends every
/// request to instance `i mod n` (so the writers of one character spread over them); the first
/// instance is the one killed. With `pace`, each client starts an edit every `pace` (the clients
/// staggered over it) rather than as soon as the last is acknowledged: a load offered at a rate
/// (`clients / pace` edits a second), whose latencies are not the queue a closed loop builds.
pub fn run_on(
    servers: Vec<Server>,
    clients: usize,
    writers: usize,
    edits: usize,
    kill_after: Option<usize>,
    pace: Option<Duration>,
) -> Report {
    let characters = clients.div_ceil(writers);
    let fighter =
        std::fs::read_to_string(repo().join("testdata/characters/fighter-5.yaml")).unwrap();
    let addrs: Vec<SocketAddr> = servers.iter().map(|s| s.addr).collect();
    let mut servers = servers.into_iter();
    let server = Arc::new(Mutex::new(servers.next().expect("an instance")));
    let others: Vec<Server> = servers.collect();
    let acknowledged = Arc::new(AtomicUsize::new(0));
    let latencies = Arc::new(Mutex::new(Vec::new()));
    let attempts = Arc::new(Mutex::new(Vec::new()));
    let conflicts = Arc::new(AtomicUsize::new(0));
    let recovered = Arc::new(AtomicUsize::new(0));
    // The clock (and the CPU count) starts once every client has made its character and read it:
    // the run times the edits, not the characters' first opens.
    let ready = Arc::new(AtomicUsize::new(0));
    // Held until the run starts: each client waits on it once ready.
    let gate = Arc::new(std::sync::RwLock::new(()));
    let closed = gate.write().unwrap();
    let killer = kill_after.map(|after| {
        let (server, acknowledged) = (server.clone(), acknowledged.clone());
        std::thread::spawn(move || {
            while acknowledged.load(Ordering::SeqCst) < after {
                std::thread::sleep(Duration::from_millis(5));
            }
            server.lock().unwrap().kill_and_restart();
        })
    });
    let threads: Vec<_> = (0..clients)
        .map(|i| {
            let fighter = fighter.clone();
            let (acknowledged, latencies, recovered) =
                (acknowledged.clone(), latencies.clone(), recovered.clone());
            let (attempts, conflicts) = (attempts.clone(), conflicts.clone());
            let addr = addrs[i % addrs.len()];
            let (ready, gate) = (ready.clone(), gate.clone());
            std::thread::spawn(move || {
                let mut client = Client::new(addr);
                let id = format!("load-{}", i / writers);
                let create = json!({ "id": id, "character": fighter }).to_string();
                loop {
                    match request(addr, "POST", "/api/characters", &create) {
                        Some((200, _)) | Some((409, _)) => break,
                        _ => std::thread::sleep(Duration::from_millis(50)),
                    }
                }
                let mut revision = read(&mut client, &id).1;
                ready.fetch_add(1, Ordering::SeqCst);
                drop(gate.read());
                let begin =
                    Instant::now() + pace.map_or(Duration::ZERO, |p| p * i as u32 / clients as u32);
                for k in 1..=edits as i64 {
                    if let Some(pace) = pace {
                        let due = begin + pace * (k - 1) as u32;
                        std::thread::sleep(due.saturating_duration_since(Instant::now()));
                    }
                    let first = Instant::now();
                    let value = saved(k);
                    loop {
                        let body = json!({ "revision": revision, "value": value }).to_string();
                        let path = format!("/api/characters/{id}/values/{FIELD}");
                        let sent = Instant::now();
                        let answered = client.request("PUT", &path, &body);
                        if let Some((200 | 409, _)) = answered {
                            attempts.lock().unwrap().push(sent.elapsed());
                        }
                        match answered {
                            Some((200, answer)) => {
                                latencies.lock().unwrap().push(first.elapsed());
                                revision = answer["revision"].as_u64().unwrap();
                                acknowledged.fetch_add(1, Ordering::SeqCst);
                                break;
                            }
                            Some((409, _)) if writers > 1 => {
                                conflicts.fetch_add(1, Ordering::SeqCst);
                                revision = read(&mut client, &id).1;
                            }
                            Some((409, _)) | None => {
                                // The answer may have been lost after the write was stored: the
                                // store says whether it was.
                                let (stored, now) = read(&mut client, &id);
                                if stored == value && now == revision + 1 {
                                    recovered.fetch_add(1, Ordering::SeqCst);
                                    acknowledged.fetch_add(1, Ordering::SeqCst);
                                    revision = now;
                                    break;
                                }
                                revision = now;
                            }
                            Some((status, answer)) => panic!("edit answered {status}: {answer}"),
                        }
                    }
                }
            })
        })
        .collect();
    // A client that failed before it was ready ends the wait (its panic is told at its join).
    while ready.load(Ordering::SeqCst) < clients && !threads.iter().any(|t| t.is_finished()) {
        std::thread::sleep(Duration::from_millis(1));
    }
    let started = Instant::now();
    let service_before: Option<Duration> = {
        let first = server.lock().unwrap().cpu();
        others.iter().map(Server::cpu).chain([first]).sum()
    };
    let client_before = cpu_of("/proc/self/stat");
    drop(closed);
    for thread in threads {
        thread.join().unwrap();
    }
    if let Some(killer) = killer {
        killer.join().unwrap();
    }
    let elapsed = started.elapsed();
    let client_cpu = cpu_of("/proc/self/stat")
        .zip(client_before)
        .map(|(after, before)| after.saturating_sub(before));
    let service_cpu = if kill_after.is_some() {
        None
    } else {
        let first = server.lock().unwrap().cpu();
        let after: Option<Duration> = others.iter().map(Server::cpu).chain([first]).sum();
        after
            .zip(service_before)
            .map(|(after, before)| after.saturating_sub(before))
    };
    let finals = (0..characters)
        .map(|i| read(&mut Client::new(addrs[0]), &format!("load-{i}")))
        .collect();
    drop(server);
    drop(others);
    Report {
        latencies: Arc::try_unwrap(latencies).unwrap().into_inner().unwrap(),
        attempts: Arc::try_unwrap(attempts).unwrap().into_inner().unwrap(),
        conflicts: conflicts.load(Ordering::SeqCst),
        recovered: recovered.load(Ordering::SeqCst),
        finals,
        elapsed,
        service_cpu,
        client_cpu,
    }
}

/// The hit points the `k`th edit (from 1) saves: 1 to 40, within the sample's maximum (a saved
/// value past it is `out-of-range`), each edit's differing from the one before.
pub fn saved(k: i64) -> i64 {
    (k - 1) % 40 + 1
}

/// Stores (and so opens) `load-<i>` for each `i` in `ids`, one after another.
pub fn create(addr: SocketAddr, ids: std::ops::Range<usize>) {
    let fighter =
        std::fs::read_to_string(repo().join("testdata/characters/fighter-5.yaml")).unwrap();
    for i in ids {
        let create = json!({ "id": format!("load-{i}"), "character": fighter }).to_string();
        match request(addr, "POST", "/api/characters", &create) {
            Some((200, _)) => {}
            other => panic!("creating load-{i}: {other:?}"),
        }
    }
}

/// The character's hit points and revision, waiting out a restart.
fn read(client: &mut Client, id: &str) -> (i64, u64) {
    let addr = client.addr;
    let started = Instant::now();
    let mut told = false;
    loop {
        let asked = Instant::now();
        let answer = client.request("GET", &format!("/api/characters/{id}/fields/{FIELD}"), "");
        if let Some((200, answer)) = answer {
            return (
                answer["value"]["value"].as_i64().unwrap(),
                answer["revision"].as_u64().unwrap(),
            );
        }
        if !told && started.elapsed() > Duration::from_secs(30) {
            eprintln!(
                "`{id}` cannot be read from {addr} for {:.0?}: {answer:?} after {:.1?}",
                started.elapsed(),
                asked.elapsed()
            );
            told = true;
        }
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "`{id}` cannot be read from {addr}: {answer:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}
