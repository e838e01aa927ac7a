//! What a close costs the characters that stay open (issue 19), for callgrind: opens the generated
//! character of `FIELDS` fields in a session and computes its sheet, then runs `N` cycles of
//! `MODE` beside it, each followed by reading what changed on the big character
//! (`Session::changes`):
//!
//! - `close`: a second generated character opened, its sheet computed, and closed;
//! - `open`: the same without reading the big character (subtract it from `close`);
//! - `edit`: a value of the second character (kept open) edited, for comparison;
//! - `homebrew` / `homebrew-open`: as `close` / `open`, the second character carrying a homebrew
//!   (its own ruleset input, freed at the close).
//!
//! `cargo run --release -p ocf-engine --example close_cost -- FIELDS N MODE`

use ocf_engine::Session;
use ocf_synthetic::Synthetic;
use serde_json::json;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let fields: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(2000);
    let cycles: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(0);
    let mode = args.get(2).map(String::as_str).unwrap_or("close");
    let size = Synthetic::with_fields(fields).expect("a size");
    let rules = std::sync::Arc::new(size.ruleset());
    let mut session = Session::shared(rules);
    let big = session.open(&size.character(14), &[]);
    std::hint::black_box(session.changes(big).expect("open"));
    let mut small = size.character(15);
    small.id = "other".into();
    if mode.starts_with("homebrew") {
        small.homebrew =
            Some(serde_json::from_value(json!({ "content": [] })).expect("a homebrew"));
    }
    let kept = session.open(&small, &[]);
    std::hint::black_box(session.sheet(kept).expect("open"));
    if std::env::var_os("CLOSE_COST_ERRORS").is_some() {
        eprintln!("homebrew errors: {:?}", session.homebrew_errors(kept));
    }
    for n in 0..cycles {
        match mode {
            "edit" => {
                let score = if n % 2 == 0 { 12 } else { 13 };
                session
                    .set_value(kept, Synthetic::EDITED, Some(json!(score)))
                    .expect("open");
                std::hint::black_box(session.sheet(kept).expect("open"));
            }
            _ => {
                let other = session.open(&small, &[]);
                std::hint::black_box(session.sheet(other).expect("open"));
                session.close(other);
            }
        }
        if !mode.ends_with("open") {
            std::hint::black_box(session.changes(big).expect("open"));
        }
    }
}
