//! For callgrind (`scripts/callgrind-counts proposed`): on the generated 2 000-field character with
//! its sheet computed, runs `g:proposed` (a changes step, then a `sheet: proposed` step reading a
//! field downstream of it) RUNS times, raising the score to 17 and 18 by turns, or with
//! `--scratch` computes the sheet from scratch RUNS
//! times. `proposed_step 0` is the setup alone, for the baseline.
//!
//! `proposed_step RUNS [--scratch | --reclaim]`: with `--reclaim`, `Session::reclaim` after each
//! run, as a long session does (the peak RSS then stays flat in RUNS; without it each run leaves
//! its proposed character's inputs in the database).

use ocf_actions::{Limits, StartInput};
use ocf_dice::SeededDice;
use ocf_engine::Session;
use ocf_synthetic::Synthetic;
use serde_json::json;

fn main() {
    let mut args = std::env::args().skip(1);
    let runs: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(1);
    let flag = args.next();
    let scratch = flag.as_deref() == Some("--scratch");
    let reclaim = flag.as_deref() == Some("--reclaim");
    let big = Synthetic::default();
    let rules = big.ruleset_with_proposed("f1700");
    let mut session = Session::new(rules.clone());
    let pc = session.open(&big.character(14), &[]);
    session.sheet(pc).expect("the sheet");
    let mut input = session.character_input(pc).expect("open");
    // Each run raises the score to another value than the run before, as a table's actions
    // propose other changes each time: a run applies its batch, not the last run's again.
    let calls: Vec<StartInput> = [17, 18]
        .iter()
        .map(|to| {
            serde_json::from_value(
                json!({ "action": { "id": "g:proposed" }, "params": { "to": to } }),
            )
            .expect("input")
        })
        .collect();
    for run in 0..runs {
        let call = &calls[run % 2];
        if scratch {
            let mut s = Session::new(rules.clone());
            let pc = s.open(&big.character(18), &[]);
            std::hint::black_box(s.sheet(pc).expect("the sheet"));
        } else {
            let out = ocf_actions::start_action(
                session.db(pc).expect("open"),
                input,
                call,
                &mut SeededDice::new(1),
                Limits::default(),
            )
            .expect("runs");
            std::hint::black_box(out);
            if reclaim && session.reclaim(pc).expect("open") {
                input = session.character_input(pc).expect("open");
            }
        }
    }
}
