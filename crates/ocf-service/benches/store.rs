//! `cargo bench -p ocf-service --bench store`: the SQLite store's durability choices measured alone
//! (docs/service.md, "Durability"): 100 threads, each saving its own character (a 6 KB file) 50
//! times one save after another, as the service's writes reach the store; for each of WAL with
//! `synchronous=FULL` and each save committed alone, `FULL` with group commit (the default), and
//! `NORMAL` alone and grouped. Prints saves per second and the p50 and p99 of one save. Bounded in count
//! (`OCF_STORE_THREADS`, `OCF_STORE_SAVES`), not in time.

use std::sync::Arc;
use std::time::{Duration, Instant};

use ocf_service::store::{Durability, SqliteStore, Store};

fn main() {
    let count = |name: &str, default: usize| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let threads = count("OCF_STORE_THREADS", 100);
    let saves = count("OCF_STORE_SAVES", 50);
    let dir = std::env::temp_dir().join(format!("ocf-store-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let body = format!("{{\"pad\":\"{}\"}}", "x".repeat(6000));
    for (name, durability) in [
        (
            "WAL, synchronous=FULL, each save alone",
            Durability {
                full_sync: true,
                group_commit: false,
            },
        ),
        (
            "WAL, synchronous=FULL, group commit (the default)",
            Durability::default(),
        ),
        (
            "WAL, synchronous=NORMAL, each save alone",
            Durability {
                full_sync: false,
                group_commit: false,
            },
        ),
        (
            "WAL, synchronous=NORMAL, group commit",
            Durability {
                full_sync: false,
                group_commit: true,
            },
        ),
    ] {
        let path = dir.join(format!("{}.sqlite3", name.len()));
        let store = Arc::new(SqliteStore::open_with(path.to_str().unwrap(), durability).unwrap());
        for t in 0..threads {
            store.create(&format!("pc{t}"), &body, None).unwrap();
        }
        let started = Instant::now();
        let workers: Vec<_> = (0..threads)
            .map(|t| {
                let (store, body) = (store.clone(), body.clone());
                std::thread::spawn(move || {
                    let id = format!("pc{t}");
                    let mut took = Vec::with_capacity(saves);
                    for k in 0..saves {
                        let sent = Instant::now();
                        store.save(&id, k as u64 + 1, &body).unwrap();
                        took.push(sent.elapsed());
                    }
                    took
                })
            })
            .collect();
        let mut took: Vec<Duration> = workers
            .into_iter()
            .flat_map(|w| w.join().unwrap())
            .collect();
        let elapsed = started.elapsed();
        took.sort();
        let at = |p: f64| took[((took.len() - 1) as f64 * p).round() as usize];
        println!(
            "{name}: {threads} threads x {saves} saves in {elapsed:.2?}: {:.0} saves/s; a save p50 \
             {:.2?}, p99 {:.2?}",
            (threads * saves) as f64 / elapsed.as_secs_f64(),
            at(0.5),
            at(0.99)
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
