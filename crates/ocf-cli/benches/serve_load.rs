//! `cargo bench -p ocf-cli --bench serve_load`: 100 concurrent clients through `ocf serve` over
//! loopback (SQLite store), each making 50 acknowledged edits: first each editing a character of
//! its own (one writer per character), then in fives on one character (five writers per character,
//! retrying on `conflict`), then one writer per character again with the service killed and
//! restarted halfway. Prints acknowledged edits per second, p50 and p99 of a PUT and of an edit
//! with its retries: the figures of docs/perf.md. Bounded in count (`OCF_LOAD_CLIENTS`,
//! `OCF_LOAD_EDITS`), not in time.

#[path = "../tests/load/mod.rs"]
mod load;

fn main() {
    let clients: usize = std::env::var("OCF_LOAD_CLIENTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100);
    let edits: usize = std::env::var("OCF_LOAD_EDITS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(50);
    let dir = std::env::temp_dir().join(format!("ocf-serve-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for (name, writers, kill) in [
        ("one writer per character", 1, None),
        ("five writers per character", 5, None),
        ("one writer, killed halfway", 1, Some(clients * edits / 2)),
    ] {
        let server = load::Server::start(
            &dir.join(format!("{}.sqlite3", name.replace([' ', ','], "-"))),
            load::free_addr(),
        );
        let report = load::run_shared(server, clients, writers, edits, kill);
        let lost = report
            .finals
            .iter()
            .filter(|(v, _)| *v != edits as i64)
            .count();
        let doubled = report
            .finals
            .iter()
            .filter(|(_, r)| *r != (edits * writers) as u64 + 1)
            .count();
        println!(
            "{name}: {clients} clients x {edits} edits in {:.2?}: {:.0} edits/s; PUT p50 {:.2?}, \
             p99 {:.2?}; edit with its retries p50 {:.2?}, p99 {:.2?}; {} conflicts; lost {lost}, \
             doubled {doubled}, answers lost to the kill and found stored {}",
            report.elapsed,
            (clients * edits) as f64 / report.elapsed.as_secs_f64(),
            report.attempt_percentile(0.5),
            report.attempt_percentile(0.99),
            report.percentile(0.5),
            report.percentile(0.99),
            report.conflicts,
            report.recovered,
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
