//! What the service's tests share: a service on a loopback port over a given store and the 5E pack,
//! requests by plain HTTP/1.1, and a throwaway PostgreSQL server.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use ocf_service::rulesets::Fixed;
use ocf_service::store::SqliteStore;
use ocf_service::{App, Limits};
use serde_json::{Value, json};

mod postgres;
#[allow(unused_imports)]
pub use postgres::Postgres;

pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

pub fn ruleset() -> Arc<ocf_model::Ruleset> {
    static RULESET: std::sync::OnceLock<Arc<ocf_model::Ruleset>> = std::sync::OnceLock::new();
    RULESET
        .get_or_init(|| {
            let report = ocf_load::build::build_report(
                &repo().join("testdata/packs/5e-srd-5.1"),
                &Default::default(),
            );
            let release = report.release.expect("the 5E pack builds");
            Arc::new(ocf_load::load_ruleset(&[release], &Default::default()).expect("it loads"))
        })
        .clone()
}

/// A folder of its own under the system's temporary folder.
pub fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ocf-service-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A service on a free loopback port over the SQLite file `db`, running until the test ends.
pub fn start(db: &Path, limits: Limits) -> SocketAddr {
    let store = SqliteStore::open(db.to_str().unwrap()).unwrap();
    start_on(Box::new(store), limits)
}

/// A service on a free loopback port over `store`.
pub fn start_on(store: Box<dyn ocf_service::store::Store>, limits: Limits) -> SocketAddr {
    start_with(store, limits, ocf_service::Settings::new())
}

/// A service on a free loopback port over `store`, with `settings` (whether it is open is decided
/// at start, from the accounts in the store).
pub fn start_with(
    store: Box<dyn ocf_service::store::Store>,
    limits: Limits,
    settings: ocf_service::Settings,
) -> SocketAddr {
    start_app(
        App::new(Box::new(Fixed(ruleset())), store, limits),
        settings,
    )
}

/// `app` served on a free loopback port with `settings`.
pub fn start_app(app: App, settings: ocf_service::Settings) -> SocketAddr {
    app.set_settings(settings);
    let app = Arc::new(app);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            tx.send(listener.local_addr().unwrap()).unwrap();
            ocf_service::serve(listener, app).await.unwrap();
        });
    });
    rx.recv().unwrap()
}

thread_local! {
    /// The bearer token [`request`] sends, if any (set by [`as_token`]).
    static TOKEN: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// Makes this thread's [`request`]s send `token` (`None`: no credentials).
pub fn as_token(token: Option<&str>) {
    TOKEN.with(|t| *t.borrow_mut() = token.map(str::to_owned));
}

/// One request; the status and the body as JSON (a string when it is not JSON). The answer is read
/// by its `Content-Length` (or its chunks), not to the connection's end: a server may keep the
/// connection open whatever the request asks.
pub fn request(addr: SocketAddr, method: &str, path: &str, body: Option<&str>) -> (u16, Value) {
    try_request(addr, method, path, body).unwrap_or_else(|error| panic!("{method} {path}: {error}"))
}

/// An answer: its status, its headers (names lowercase) and its body.
pub type Exchanged = (u16, Vec<(String, String)>, Value);

/// A request with exactly `headers` (besides `Content-Length` and `Connection`): the status, the
/// answer's headers (names lowercase) and its body.
pub fn raw(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&str>,
) -> Exchanged {
    exchange(addr, method, path, headers, body)
        .unwrap_or_else(|error| panic!("{method} {path}: {error}"))
}

/// [`request`] as the holder of `token`.
pub fn request_as(
    addr: SocketAddr,
    token: &str,
    method: &str,
    path: &str,
    body: Option<&str>,
) -> (u16, Value) {
    let bearer = format!("Bearer {token}");
    let headers = [
        ("Host", "127.0.0.1"),
        ("Content-Type", "application/json"),
        ("Authorization", bearer.as_str()),
    ];
    let (status, _, body) = raw(addr, method, path, &headers, body);
    (status, body)
}

/// [`request`], with the connection's errors returned: for a caller that may retry (a program
/// that has just started listening can still reset its first connections).
pub fn try_request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    body: Option<&str>,
) -> std::io::Result<(u16, Value)> {
    let token = TOKEN.with(|t| t.borrow().clone().map(|t| format!("Bearer {t}")));
    let mut headers = vec![("Host", "127.0.0.1"), ("Content-Type", "application/json")];
    if let Some(token) = &token {
        headers.push(("Authorization", token.as_str()));
    }
    exchange(addr, method, path, &headers, body).map(|(status, _, body)| (status, body))
}

fn exchange(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&str>,
) -> std::io::Result<Exchanged> {
    let mut stream = connect(addr);
    stream.set_read_timeout(Some(Duration::from_secs(120)))?;
    let body = body.unwrap_or("");
    let mut head = format!("{method} {path} HTTP/1.1\r\n");
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    write!(
        stream,
        "{head}Connection: close\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )?;
    let mut answer_headers = Vec::new();
    let broken = |what: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, what.to_owned());
    let mut reader = std::io::BufReader::new(stream);
    let mut status = 0;
    let mut length = None;
    let mut chunked = false;
    loop {
        let mut line = String::new();
        if std::io::BufRead::read_line(&mut reader, &mut line)? == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if status == 0 {
            status = line
                .split(' ')
                .nth(1)
                .and_then(|code| code.parse().ok())
                .ok_or_else(|| broken(line))?;
        } else if let Some((name, value)) = line.split_once(':') {
            answer_headers.push((name.to_ascii_lowercase(), value.trim().to_owned()));
            match name.to_ascii_lowercase().as_str() {
                "content-length" => length = value.trim().parse::<usize>().ok(),
                "transfer-encoding" => chunked = value.trim().eq_ignore_ascii_case("chunked"),
                _ => {}
            }
        }
    }
    let mut bytes = Vec::new();
    if chunked {
        loop {
            let mut size = String::new();
            std::io::BufRead::read_line(&mut reader, &mut size)?;
            let size = usize::from_str_radix(size.trim(), 16).map_err(|_| broken(&size))?;
            let mut chunk = vec![0; size + 2];
            reader.read_exact(&mut chunk)?;
            if size == 0 {
                break;
            }
            bytes.extend_from_slice(&chunk[..size]);
        }
    } else if let Some(length) = length {
        bytes.resize(length, 0);
        reader.read_exact(&mut bytes)?;
    } else {
        reader.read_to_end(&mut bytes)?;
    }
    let text = String::from_utf8(bytes).map_err(|_| broken("the body is not UTF-8"))?;
    Ok((
        status,
        answer_headers,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    ))
}

pub fn post_fighter(addr: SocketAddr, id: &str) -> Value {
    let text = std::fs::read_to_string(repo().join("testdata/characters/fighter-5.yaml")).unwrap();
    let body = json!({ "id": id, "character": text }).to_string();
    let (status, answer) = request(addr, "POST", "/api/characters", Some(&body));
    assert_eq!(status, 200, "{answer}");
    answer
}

pub fn set(addr: SocketAddr, id: &str, field: &str, revision: u64, value: Value) -> (u16, Value) {
    let body = json!({ "revision": revision, "value": value }).to_string();
    request(
        addr,
        "PUT",
        &format!("/api/characters/{id}/values/{field}"),
        Some(&body),
    )
}

pub fn codes(answer: &Value) -> Vec<&str> {
    answer["errors"]
        .as_array()
        .map(|errors| errors.iter().filter_map(|e| e["code"].as_str()).collect())
        .unwrap_or_default()
}

/// A connection to `addr`, tried again for a few seconds while it is refused: a freshly started
/// server (chromedriver on a fresh machine, say) may accept one connection and refuse the next
/// while it finishes starting.
fn connect(addr: SocketAddr) -> TcpStream {
    let started = std::time::Instant::now();
    loop {
        match TcpStream::connect(addr) {
            Ok(stream) => return stream,
            Err(e)
                if e.kind() == std::io::ErrorKind::ConnectionRefused
                    && started.elapsed() < Duration::from_secs(10) =>
            {
                std::thread::sleep(Duration::from_millis(100));
            }
            Err(e) => panic!("connecting to {addr}: {e}"),
        }
    }
}

/// A page subscribed to a character's events (`GET /api/characters/{id}/events`): `next()` waits
/// for the next event's name and data (a minute at most; a stream that ends fails the test).
pub struct Events(BufReader<TcpStream>);

impl Events {
    pub fn open(addr: SocketAddr, id: &str) -> Events {
        let mut stream = TcpStream::connect(addr).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(60)))
            .unwrap();
        write!(
            stream,
            "GET /api/characters/{id}/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
        )
        .unwrap();
        Events(BufReader::new(stream))
    }

    pub fn next(&mut self) -> (String, Value) {
        let mut event = String::new();
        loop {
            let mut line = String::new();
            assert!(self.0.read_line(&mut line).unwrap() > 0, "the stream ended");
            let line = line.trim_end();
            if let Some(name) = line.strip_prefix("event: ") {
                event = name.to_owned();
            } else if let Some(data) = line.strip_prefix("data: ") {
                return (event, serde_json::from_str(data).unwrap());
            }
        }
    }
}
