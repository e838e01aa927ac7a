//! What computeSheet's `no-eligible-option` costs an edit, for `scripts/callgrind-no-eligible`
//! (callgrind's instruction counts repeat on a noisy machine where wall times don't): the
//! generated character of `FIELDS` fields on `Synthetic::ruleset_with_choice(OPTIONS)`, its
//! rules-level choice of feats (each adding 1 to a derived field) left pending, then `EDITS` edits
//! of `g:score0`, each followed by a read of what the edit changed. `plain`: the choice doesn't say
//! `requiresOption`; `eligible`: it does and every feat needs `score0 >= 0` (the first feat's trial
//! settles it); `none`: it does and every feat needs `score0 > 1000` (no feat is eligible: one
//! trial per feat). The script runs it with 0 and with `EDITS` edits and divides the difference.
//!
//! `cargo run --release -p ocf-engine --example no_eligible_cost -- FIELDS OPTIONS EDITS [plain|eligible|none]`

use ocf_engine::Session;
use ocf_synthetic::Synthetic;
use serde_json::json;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg =
        |i: usize, default: usize| args.get(i).and_then(|a| a.parse().ok()).unwrap_or(default);
    let (fields, options, edits) = (arg(0, 2000), arg(1, 50), arg(2, 0));
    let mode = args.get(3).map(String::as_str).unwrap_or("plain");
    let size = Synthetic::with_fields(fields).expect("a size");
    let mut ruleset = serde_json::to_value(size.ruleset_with_choice(options)).expect("JSON");
    if mode != "plain" {
        let check = if mode == "none" {
            "score0 > 1000"
        } else {
            "score0 >= 0"
        };
        let choice = &mut ruleset["choices"][Synthetic::CHOICE];
        choice["required"] = json!(true);
        choice["requiresOption"] = json!(true);
        for k in 0..options {
            ruleset["content"][format!("g:feat{k}")]["prerequisites"] =
                json!([{ "id": "p", "check": check }]);
        }
    }
    let rules = std::sync::Arc::new(serde_json::from_value(ruleset).expect("a ruleset"));
    let mut session = Session::shared(rules);
    let pc = session.open(&size.character(14), &[]);
    let issues = |session: &mut Session| {
        let changes = session.changes(pc).expect("open");
        std::hint::black_box(changes.fields.len());
        session.sheet(pc).expect("open").issues_json().len()
    };
    let first = issues(&mut session);
    session
        .set_value(pc, Synthetic::EDITED, Some(json!(16)))
        .expect("open");
    assert_eq!(issues(&mut session), first);
    assert_eq!(first, usize::from(mode == "none"), "{mode}: the issues");
    for n in 0..edits {
        let score = if n % 2 == 0 { 14 } else { 16 };
        session
            .set_value(pc, Synthetic::EDITED, Some(json!(score)))
            .expect("open");
        std::hint::black_box(session.changes(pc).expect("open").fields.len());
    }
}
