//! What one edit costs, for `scripts/callgrind-edit` (callgrind's instruction counts repeat on a
//! noisy machine where wall times don't): opens the generated character of `FIELDS` fields in a
//! session, computes its sheet, makes one warm-up edit, then `EDITS` edits of `g:score0`, each
//! followed by a read. The script runs it with 0 and with `EDITS` edits and divides the difference.
//!
//! `cargo run --release -p ocf-engine --example edit_cost -- FIELDS EDITS [sheet|changes|cold]`:
//! `sheet` reads the whole sheet after each edit, `changes` what the edit changed; `cold` makes
//! `EDITS` new sessions each computing the sheet from scratch instead.

use ocf_engine::Session;
use ocf_synthetic::Synthetic;
use serde_json::json;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let fields: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(2000);
    let edits: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(0);
    let mode = args.get(2).map(String::as_str).unwrap_or("sheet");
    let size = Synthetic::with_fields(fields).expect("a size");
    let rules = std::sync::Arc::new(size.ruleset());
    if mode == "cold" {
        for _ in 0..edits {
            let mut session = Session::shared(rules.clone());
            let pc = session.open(&size.character(14), &[]);
            std::hint::black_box(session.sheet(pc).expect("open"));
        }
        return;
    }
    let mut session = Session::shared(rules.clone());
    let pc = session.open(&size.character(14), &[]);
    let read = |session: &mut Session| read(session, pc, mode);
    read(&mut session);
    session
        .set_value(pc, Synthetic::EDITED, Some(json!(16)))
        .expect("open");
    read(&mut session);
    for n in 0..edits {
        let score = if n % 2 == 0 { 14 } else { 16 };
        session
            .set_value(pc, Synthetic::EDITED, Some(json!(score)))
            .expect("open");
        read(&mut session);
    }
}

fn read(session: &mut Session, pc: ocf_engine::CharacterId, mode: &str) {
    match mode {
        "changes" => {
            std::hint::black_box(session.changes(pc).expect("open").fields.len());
        }
        _ => {
            std::hint::black_box(session.sheet(pc).expect("open"));
        }
    }
}
