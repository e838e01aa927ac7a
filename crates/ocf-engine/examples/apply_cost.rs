//! What applyChanges costs, for `scripts/callgrind-apply` (callgrind's instruction counts repeat on
//! a noisy machine where wall times don't): the generated character of `FIELDS` fields, its sheet
//! computed in a session, one warm-up adjust, then `RUNS` times: one adjust of a score through the
//! session and its sheet (`session`), a 100-adjust batch through the session and its sheet
//! (`batch`), or a fresh `applyChanges` of one adjust plus `computeSheet` of the new file
//! (`fresh`). The script runs it with 0 and with `RUNS` runs and divides the difference.
//!
//! `cargo run --release -p ocf-engine --example apply_cost -- FIELDS RUNS [session|batch|fresh]`

use ocf_engine::{ApplyOptions, Session};
use ocf_model::Change;
use ocf_synthetic::Synthetic;

fn adjust(field: &str, by: i64) -> Change {
    serde_json::from_value(
        serde_json::json!({ "type": "adjust", "field": field, "by": by.to_string() }),
    )
    .expect("an adjust")
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg =
        |i: usize, default: usize| args.get(i).and_then(|a| a.parse().ok()).unwrap_or(default);
    let (fields, runs) = (arg(0, 2000), arg(1, 0));
    let mode = args.get(2).map(String::as_str).unwrap_or("session");
    let big = Synthetic::with_fields(fields).expect("a size");
    let rules = std::sync::Arc::new(big.ruleset());
    let character = big.character(14);
    let batch: Vec<Change> = (0..100)
        .map(|i| {
            adjust(
                &format!("g:score{}", i % big.scores()),
                if i % 2 == 0 { 1 } else { -1 },
            )
        })
        .collect();
    let mut session = Session::shared(rules.clone());
    let pc = session.open(&character, &[]);
    session.sheet(pc).expect("open");
    if mode != "fresh" {
        // One warm-up change: the first batch of a session pays for memos no batch needs again.
        session
            .apply(pc, &[adjust(Synthetic::EDITED, 1)], ApplyOptions::default())
            .expect("an adjust");
        session.sheet(pc).expect("a sheet");
    }
    let mut by = 2;
    for _ in 0..runs {
        by = -by;
        match mode {
            "fresh" => {
                let applied = ocf_engine::apply_changes(
                    &rules,
                    &character,
                    &[adjust(Synthetic::EDITED, by)],
                    ApplyOptions::default(),
                )
                .expect("an adjust");
                std::hint::black_box(ocf_engine::compute_sheet_call(
                    &rules,
                    &applied.character,
                    &[],
                    &Default::default(),
                ));
            }
            "batch" => {
                session
                    .apply(pc, &batch, ApplyOptions::default())
                    .expect("a batch");
                std::hint::black_box(session.sheet(pc).expect("a sheet"));
            }
            _ => {
                session
                    .apply(
                        pc,
                        &[adjust(Synthetic::EDITED, by)],
                        ApplyOptions::default(),
                    )
                    .expect("an adjust");
                std::hint::black_box(session.sheet(pc).expect("a sheet"));
            }
        }
    }
}
