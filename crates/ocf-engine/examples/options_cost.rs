//! What listOptions costs, for `scripts/callgrind-options` (callgrind's instruction counts repeat
//! on a noisy machine where wall times don't): the generated character of `FIELDS` fields on
//! `Synthetic::ruleset_with_choice(OPTIONS)`, its sheet computed, then `RUNS` listOptions of the
//! rules-level choice through the session (`session`), or `RUNS` fresh trial sheets, each a new
//! session opening the character with one feat picked and computing its sheet (`fresh`). The script
//! runs it with 0 and with `RUNS` runs and divides the difference: one listOptions, or one fresh
//! trial sheet (of which listOptions' benchmark makes `OPTIONS`).
//!
//! `cargo run --release -p ocf-engine --example options_cost -- FIELDS OPTIONS RUNS [session|fresh]`

use ocf_engine::Session;
use ocf_engine::options::path::ChoicePath;
use ocf_model::{Literal, PickEntry};
use ocf_synthetic::Synthetic;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg =
        |i: usize, default: usize| args.get(i).and_then(|a| a.parse().ok()).unwrap_or(default);
    let (fields, options, runs) = (arg(0, 2000), arg(1, 50), arg(2, 0));
    let mode = args.get(3).map(String::as_str).unwrap_or("session");
    let size = Synthetic::with_fields(fields).expect("a size");
    // Shared, as a service's sessions share their ruleset: a fresh trial sheet is then the
    // sheet's own work, not a copy of the ruleset.
    let rules = std::sync::Arc::new(size.ruleset_with_choice(options));
    let character = size.character(14);
    let mut session = Session::shared(rules.clone());
    let pc = session.open(&character, &[]);
    session.sheet(pc).expect("open");
    let path = ChoicePath {
        entry: None,
        choice: vec![Synthetic::CHOICE.into()],
    };
    if mode == "session" {
        // One warm-up run: the first trial of a session pays for memos no trial needs again.
        session.list_options(pc, &path).expect("a choice");
    }
    for run in 0..runs {
        match mode {
            "fresh" => {
                let k = run % options.max(1);
                let mut file = character.clone();
                file.choices.0.insert(
                    Synthetic::CHOICE.into(),
                    vec![PickEntry {
                        option: Literal::String(format!("g:feat{k}")),
                        state: Default::default(),
                        choices: Default::default(),
                    }],
                );
                let mut session = Session::shared(rules.clone());
                let pc = session.open(&file, &[]);
                std::hint::black_box(session.sheet(pc).expect("open"));
            }
            _ => {
                let listed = session.list_options(pc, &path).expect("a choice");
                assert_eq!(listed.options.len(), options);
                std::hint::black_box(listed);
            }
        }
    }
}
