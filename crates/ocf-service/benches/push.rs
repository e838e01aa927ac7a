//! `cargo bench -p ocf-service --bench push`: how soon a subscriber hears of an edit. A subscriber
//! (server-sent events) on instance A; 50 edits one after another, each sent to instance B over the
//! same PostgreSQL store (told by PostgreSQL's `LISTEN`/`NOTIFY`), and, for comparison, to A itself
//! over SQLite. Prints p50 and p99 from sending the PUT to the event reaching the subscriber, and of
//! the PUT's own answer. Needs PostgreSQL's programs (initdb, postgres); bounded in count
//! (`OCF_PUSH_EDITS`), not in time.

#[path = "../tests/support/mod.rs"]
mod support;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use ocf_service::Limits;
use ocf_service::store::PostgresStore;
use serde_json::json;
use support::*;

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

/// `edits` edits sent to `writer`, each heard by a subscriber on `watcher`.
fn measure(name: &str, watcher: SocketAddr, writer: SocketAddr, edits: usize) {
    post_fighter(watcher, "pushed");
    let mut events = Events::open(watcher, "pushed");
    assert_eq!(events.next().0, "sheet");
    let (mut heard, mut answered) = (Vec::new(), Vec::new());
    for k in 1..=edits {
        let sent = Instant::now();
        let (status, answer) = set(writer, "pushed", "hp.current", k as u64, json!(k % 40 + 1));
        assert_eq!(status, 200, "{answer}");
        answered.push(sent.elapsed());
        let (kind, event) = events.next();
        assert_eq!(
            (kind.as_str(), event["revision"].as_u64()),
            ("changed", Some(k as u64 + 1))
        );
        heard.push(sent.elapsed());
    }
    heard.sort();
    answered.sort();
    println!(
        "{name}: {edits} edits; PUT sent to event heard p50 {:.2?}, p99 {:.2?}; PUT answered p50 \
         {:.2?}, p99 {:.2?}",
        percentile(&heard, 0.5),
        percentile(&heard, 0.99),
        percentile(&answered, 0.5),
        percentile(&answered, 0.99),
    );
}

fn main() {
    let edits: usize = std::env::var("OCF_PUSH_EDITS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(50);
    let dir = temp_dir("push-bench");
    let one = start(&dir.join("store.sqlite3"), Limits::default());
    measure("one instance, SQLite", one, one, edits);
    let Some(server) = Postgres::start("push-bench") else {
        return;
    };
    let a = start_on(
        Box::new(PostgresStore::open(&server.url).unwrap()),
        Limits::default(),
    );
    let b = start_on(
        Box::new(PostgresStore::open(&server.url).unwrap()),
        Limits::default(),
    );
    measure(
        "two instances over PostgreSQL, edited on B, heard on A",
        a,
        b,
        edits,
    );
    let _ = std::fs::remove_dir_all(&dir);
}
