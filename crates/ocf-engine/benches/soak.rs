//! A long session as a virtual tabletop's server would keep one (issue 19): one `Session` with
//! the 5E fighter (testdata/characters/fighter-5.yaml on testdata/packs/5e-srd-5.1) and the
//! 2 000-field generated character ([`ocf_synthetic`]), and a long mixed loop of edits,
//! each followed by reading what it changed (`Session::changes`): value edits of both
//! characters, equip toggles, and adding then removing a copy. Prints, per window of 10 000 edits,
//! the process's resident memory, the session's stored records and the latency of an edit plus
//! its read (median, p99). Then opens and closes 1 000 fighters beside them, printing the cost per
//! character and the memory before and after.
//!
//! Not a timed test, a benchmark: `cargo bench -p ocf-engine --bench soak` (200 000 edits;
//! `OCF_SOAK_EDITS=N` for another count, `OCF_SOAK_OPENS=N` for the open/close loop).

use std::path::Path;
use std::time::{Duration, Instant};

use ocf_engine::input::CopyList;
use ocf_engine::{CharacterId, Session};
use ocf_model::{Character, CopyEntry};
use ocf_synthetic::Synthetic;
use serde_json::json;

const WINDOW: usize = 10_000;

fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

fn fighter() -> Character {
    let text = std::fs::read_to_string(root().join("testdata/characters/fighter-5.yaml"))
        .expect("the fighter");
    let yaml: serde_json::Value = serde_yaml::from_str(&text).expect("the fighter's YAML");
    serde_json::from_value(yaml).expect("the fighter as a character")
}

/// The process's resident set in MiB (Linux; 0 elsewhere).
fn rss_mib() -> f64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: f64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0.0);
    pages * 4096.0 / (1024.0 * 1024.0)
}

fn count(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Edit `n` of the loop, on the fighter or the generated character.
fn edit(session: &mut Session, fighter: CharacterId, big: CharacterId, n: usize) {
    let dagger: CopyEntry = serde_json::from_value(
        json!({ "id": "spare-dagger", "item": "5e-srd-5.1:weapons.dagger" }),
    )
    .expect("a dagger");
    let trinket: CopyEntry =
        serde_json::from_value(json!({ "id": "extra", "item": "g:item3" })).expect("an item");
    let result = match n % 10 {
        0..=2 => session.set_value(
            big,
            &format!("g:score{}", n % 7),
            Some(json!(10 + (n / 10 % 8) as i64)),
        ),
        3..=4 => session.set_value(
            fighter,
            "5e-srd-5.1:hp.current",
            Some(json!((n / 10 % 44) as i64)),
        ),
        5 => session.equip(fighter, "shield", (n / 10).is_multiple_of(2)),
        6 => session.equip(big, "c1", (n / 10).is_multiple_of(2)),
        7 => session.add_copy(fighter, CopyList::Inventory, &dagger),
        8 => session.remove_copy(fighter, "spare-dagger"),
        _ => {
            if (n / 10).is_multiple_of(2) {
                session.add_copy(big, CopyList::Inventory, &trinket)
            } else {
                session.remove_copy(big, "extra")
            }
        }
    };
    result.expect("the edit applies");
    let which = if matches!(n % 10, 0 | 1 | 2 | 6 | 9) {
        big
    } else {
        fighter
    };
    std::hint::black_box(session.changes(which).expect("open"));
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted.get(i).map_or(0.0, |d| d.as_secs_f64() * 1000.0)
}

fn main() {
    let edits = count("OCF_SOAK_EDITS", 200_000);
    let opens = count("OCF_SOAK_OPENS", 1_000);
    let release = ocf_load::source::read_pack(&root().join("testdata/packs/5e-srd-5.1"))
        .expect("the 5E pack");
    let ruleset = ocf_load::load_ruleset(&[release], &Default::default()).expect("the 5E ruleset");
    let big = Synthetic::default();
    // One session holds one ruleset: the 5E ruleset and the generated pack side by side (so the
    // fighter's sheet lists the generated fields too, at their defaults).
    let mut merged = serde_json::to_value(&ruleset).expect("a ruleset as JSON");
    let generated = serde_json::to_value(big.ruleset()).expect("a ruleset as JSON");
    let packs = generated["packs"].as_array().cloned().unwrap_or_default();
    merged["packs"].as_array_mut().expect("packs").extend(packs);
    for key in ["fields", "contentTypes", "content"] {
        let extra = generated[key].as_object().cloned().unwrap_or_default();
        if merged[key].is_null() {
            merged[key] = json!({});
        }
        merged[key]
            .as_object_mut()
            .expect("a keyed map")
            .extend(extra);
    }
    let keys = generated["settings"]["stacking"]["keys"].clone();
    for (key, value) in keys.as_object().cloned().unwrap_or_default() {
        merged["settings"]["stacking"]["keys"][key] = value;
    }
    let merged: ocf_model::Ruleset = serde_json::from_value(merged).expect("the merged ruleset");
    let mut session = Session::new(merged);
    let fighter_file = fighter();
    let fighter = session.open(&fighter_file, &[]);
    let big_pc = session.open(&big.character(14), &[]);
    session.changes(fighter).expect("open");
    session.changes(big_pc).expect("open");
    println!("window  edits    RSS MiB  records  median ms  p99 ms");
    let start_rss = rss_mib();
    println!(
        "{:>6}  {:>7}  {:>7.1}  {:>7}  {:>9}  {:>6}",
        0,
        0,
        start_rss,
        session.stored(),
        "-",
        "-"
    );
    let mut times = Vec::with_capacity(WINDOW);
    let mut rss = Vec::new();
    for n in 0..edits {
        let started = Instant::now();
        edit(&mut session, fighter, big_pc, n);
        times.push(started.elapsed());
        if (n + 1) % WINDOW == 0 {
            times.sort();
            let now = rss_mib();
            rss.push(now);
            println!(
                "{:>6}  {:>7}  {:>7.1}  {:>7}  {:>9.3}  {:>6.3}",
                (n + 1) / WINDOW,
                n + 1,
                now,
                session.stored(),
                percentile(&times, 0.5),
                percentile(&times, 0.99)
            );
            times.clear();
        }
    }
    if rss.len() >= 3 {
        // The slope from the second window on (the first warms the allocator and the memos).
        let (first, last) = (rss[1], rss[rss.len() - 1]);
        println!(
            "memory slope: {:+.3} MiB per {WINDOW} edits (windows 2 to {})",
            (last - first) / (rss.len() - 2) as f64,
            rss.len()
        );
    }
    let before = rss_mib();
    let before_records = session.records_by_name();
    let started = Instant::now();
    let mut reads = Vec::new();
    for n in 0..opens {
        let pc = session.open(&fighter_file, &[]);
        session.sheet(pc).expect("open");
        session.close(pc);
        if n % 50 == 49 {
            // The next read of a character left open after a close: what the close costs it.
            let read = Instant::now();
            std::hint::black_box(session.changes(big_pc).expect("open"));
            reads.push(read.elapsed());
        }
        if [299, 999].contains(&n) || n + 1 == opens {
            println!(
                "after {} opens and closes: records {}",
                n + 1,
                session.stored()
            );
        }
    }
    let took = started.elapsed();
    println!(
        "open + sheet + close of a fighter, {opens} times beside the two: {:.3} ms each; RSS {:.1} -> {:.1} MiB, records {}",
        took.as_secs_f64() * 1000.0 / opens.max(1) as f64,
        before,
        rss_mib(),
        session.stored()
    );
    reads.sort();
    println!(
        "the 2 000-field character's next read after closes: median {:.3} ms, max {:.3} ms",
        percentile(&reads, 0.5),
        percentile(&reads, 1.0)
    );
    // Which records the opens and closes left (by query or struct), to find what grows.
    for (name, count) in session.records_by_name() {
        let was = before_records
            .iter()
            .find(|(n, _)| *n == name)
            .map_or(0, |(_, c)| *c);
        if count != was {
            println!("  {name}: {was} -> {count}");
        }
    }
}
