//! `cargo bench -p ocf-cli --bench serve_load`: 100 concurrent clients, each editing its own
//! character 50 times through `ocf serve` (a release build, SQLite store), p50 and p99 of an edit;
//! then the same with the service killed and restarted halfway. Prints the figures of docs/perf.md.

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
    for (name, kill) in [
        ("straight", None),
        ("killed halfway", Some(clients * edits / 2)),
    ] {
        let server = load::Server::start(
            &dir.join(format!("{}.sqlite3", name.replace(' ', "-"))),
            load::free_addr(),
        );
        let report = load::run(server, clients, edits, kill);
        let lost = report
            .finals
            .iter()
            .filter(|(v, _)| *v != edits as i64)
            .count();
        let doubled = report
            .finals
            .iter()
            .filter(|(_, r)| *r != edits as u64 + 1)
            .count();
        println!(
            "{name}: {clients} clients x {edits} edits in {:.2?}: {:.0} edits/s, p50 {:.2?}, p99 {:.2?}, lost {lost}, doubled {doubled}, answers lost to the kill and found stored {}",
            report.elapsed,
            (clients * edits) as f64 / report.elapsed.as_secs_f64(),
            report.percentile(0.5),
            report.percentile(0.99),
            report.recovered,
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
