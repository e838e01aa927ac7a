//! What a batch of N changes costs, for `scripts/callgrind-batch` (issue 36: "a batch of N changes
//! costs about N times one change"): the generated character of `FIELDS` fields opened in a
//! session with its sheet, then one batch of `N` changes applied through it (`adjust`: adjusts of
//! the scores by +1 and -1 in turn; `set`: sets of the edited score). The script runs it with 0 and
//! with N changes and divides the difference by N.
//!
//! `cargo run --release -p ocf-engine --example batch_cost -- FIELDS N [adjust|set]`

use ocf_engine::{ApplyOptions, Session};
use ocf_model::Change;
use ocf_synthetic::Synthetic;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg =
        |i: usize, default: usize| args.get(i).and_then(|a| a.parse().ok()).unwrap_or(default);
    let (fields, n) = (arg(0, 2000), arg(1, 0));
    let kind = args.get(2).map(String::as_str).unwrap_or("adjust");
    let big = Synthetic::with_fields(fields).expect("a size");
    let rules = std::sync::Arc::new(big.ruleset());
    let character = big.character(14);
    let batch: Vec<Change> = (0..n)
        .map(|i| {
            let change = match kind {
                "set" => serde_json::json!({
                    "type": "set", "field": Synthetic::EDITED, "value": (10 + i % 5).to_string(),
                }),
                _ => serde_json::json!({
                    "type": "adjust",
                    "field": format!("g:score{}", i % big.scores()),
                    "by": if (i / big.scores()).is_multiple_of(2) { "1" } else { "-1" },
                }),
            };
            serde_json::from_value(change).expect("a change")
        })
        .collect();
    let mut session = Session::shared(rules);
    let pc = session.open(&character, &[]);
    session.sheet(pc).expect("open");
    if n > 0 {
        session
            .apply(pc, &batch, ApplyOptions::default())
            .expect("a batch");
        std::hint::black_box(session.sheet(pc).expect("a sheet"));
    }
}
