//! A step on the proposed sheet (EA "The proposed sheet") against a sheet from scratch, on the
//! generated 2 000-field character of [`ocf_synthetic`]: an action raises the edited score
//! (`g:score0`), and a `sheet: proposed` step reads a field 17 formulas downstream of it
//! (`g:f1700`), raising it to 17 and 18 by turns, so that each run applies its own batch. The
//! session's sheet is computed first, as an app's is, and reclaimed after each run, as `ocf serve`
//! does. Also: the same action with its second step on
//! the given sheet (the action's own cost), and computeSheet from scratch.
//!
//! `cargo bench -p ocf-actions --bench proposed -- --warm-up-time 1 --measurement-time 3`

use criterion::{Criterion, criterion_group, criterion_main};
use ocf_actions::{Limits, StartInput};
use ocf_dice::SeededDice;
use ocf_engine::Session;
use ocf_synthetic::Synthetic;
use serde_json::json;

fn bench(c: &mut Criterion) {
    let big = Synthetic::default();
    let rules = big.ruleset_with_proposed("f1700");
    let mut session = Session::new(rules.clone());
    let pc = session.open(&big.character(14), &[]);
    session.sheet(pc).expect("the sheet");
    let call = |id: &str, to: i64| -> StartInput {
        serde_json::from_value(
            json!({ "action": { "id": format!("g:{id}") }, "params": { "to": to } }),
        )
        .expect("input")
    };
    let proposed = [call("proposed", 17), call("proposed", 18)];
    let given = call("given", 18);
    // A run, then a reclaim, as `ocf serve` makes one after each action call: the proposed
    // characters a run derives stay in the session's database until one rebuilds it.
    let run = |session: &mut Session, start: &StartInput| {
        let out = ocf_actions::start_action(
            session.db(pc).expect("open"),
            session.character_input(pc).expect("open"),
            start,
            &mut SeededDice::new(1),
            Limits::default(),
        )
        .expect("runs");
        session.reclaim(pc).expect("open");
        out
    };
    // The proposed step reads the raised score's dependent, the given one the sheet as it was.
    let p = run(&mut session, &proposed[1]);
    let g = run(&mut session, &given);
    assert_ne!(
        p["proposedChanges"][1]["change"]["value"],
        g["proposedChanges"][1]["change"]["value"]
    );
    let mut group = c.benchmark_group("proposed sheet");
    let mut turn = 0;
    group.bench_function("action with a proposed-sheet step", |b| {
        b.iter(|| {
            turn += 1;
            run(&mut session, &proposed[turn % 2])
        })
    });
    group.bench_function("action with a given-sheet step", |b| {
        b.iter(|| run(&mut session, &given))
    });
    group.bench_function("computeSheet from scratch", |b| {
        b.iter(|| {
            let mut session = Session::new(rules.clone());
            let pc = session.open(&big.character(18), &[]);
            session.sheet(pc).expect("the sheet")
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
