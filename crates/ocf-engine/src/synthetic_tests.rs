//! The generated character of the benchmarks ([`ocf_synthetic`]) on the engine: its sizes, its
//! sheet, and what its trials walk again.

use ocf_synthetic::*;
use serde_json::json;

use crate::Session;

#[test]
fn the_default_size_is_the_benchmarks() {
    let big = Synthetic::default();
    assert_eq!(
        (big.fields(), big.scores(), big.derived(), big.copies()),
        (2000, 100, 1800, 100)
    );
    assert_eq!(big.ruleset().fields.len(), 2000);
}

/// The choice lists its feats in order, each changing the derived field it adds to (and that
/// field's chain), and a trial re-executes only the fields depending on the pick: each feat's
/// chain when it is picked and again when the next trial takes it back (18, 18 + 15, 15 + 11),
/// and, where the pick puts the first instance on a field, the other fields of its
/// [`crate::db::fields_with_instances`] chunk (at most 7 each time: 20 in all here), none
/// of the other fields.
#[test]
fn the_choice_lists_each_feat_with_its_changes() {
    let small = Synthetic::with_fields(200).unwrap();
    let mut session = Session::with_execution_log(small.ruleset_with_choice(3));
    let pc = session.open(&small.character(14), &[]);
    session.sheet(pc).unwrap();
    session.take_executed();
    let path = crate::options::path::ChoicePath {
        entry: None,
        choice: vec![Synthetic::CHOICE.into()],
    };
    let listed = session.list_options(pc, &path).unwrap();
    let all = session.take_executed();
    let executed = all.iter().filter(|q| q.starts_with("field_value(")).count();
    let summary: Vec<String> = listed
        .options
        .iter()
        .map(|o| {
            let fields: Vec<&str> = o
                .changes
                .values
                .iter()
                .map(|(f, _, _)| f.as_str())
                .collect();
            format!("{} {} {}", o.option, o.eligible, fields.join(" "))
        })
        .collect();
    expect_test::expect![[r#"
        (
            [
                "\"g:feat0\" true g:f0 g:f10 g:f20 g:f30 g:f40 g:f50 g:f60 g:f70 g:f80 g:f90 g:f100 g:f110 g:f120 g:f130 g:f140 g:f150 g:f160 g:f170",
                "\"g:feat1\" true g:f37 g:f47 g:f57 g:f67 g:f77 g:f87 g:f97 g:f107 g:f117 g:f127 g:f137 g:f147 g:f157 g:f167 g:f177",
                "\"g:feat2\" true g:f74 g:f84 g:f94 g:f104 g:f114 g:f124 g:f134 g:f144 g:f154 g:f164 g:f174",
            ],
            97,
        )
    "#]].assert_debug_eq(&(summary, executed));
}

/// A trial's pick in the rules' tree walks the rules' choices again, not the copies: their
/// parts of the walk ([`crate::activation`]) are kept.
#[test]
fn trials_walk_no_copies_again() {
    let small = Synthetic::with_fields(400).unwrap();
    let mut session = Session::with_execution_log(small.ruleset_with_choice(3));
    let pc = session.open(&small.character(14), &[]);
    session.sheet(pc).unwrap();
    let cold = session.take_executed();
    let path = crate::options::path::ChoicePath {
        entry: None,
        choice: vec![Synthetic::CHOICE.into()],
    };
    session.list_options(pc, &path).unwrap();
    let trials = session.take_executed();
    let count = |log: &[String], query: &str| log.iter().filter(|q| q.starts_with(query)).count();
    assert_eq!(
        (count(&cold, "copies_walk"), count(&trials, "copies_walk")),
        (small.copies().div_ceil(8), 0)
    );
    assert!(count(&trials, "activations") > 0);
}

#[test]
fn sizes_out_of_bounds_are_refused() {
    for fields in [0, 2, Synthetic::MAX_FIELDS + 1] {
        assert!(Synthetic::with_fields(fields).is_err(), "{fields}");
    }
    assert_eq!(Synthetic::with_fields(3).unwrap().derived(), 1);
}

/// The smallest character computes without an error on any field, and the edited score moves
/// its modifier and the derived field reading it.
#[test]
fn a_small_character_computes() {
    let small = Synthetic::with_fields(3).unwrap();
    let mut session = Session::new(small.ruleset());
    let pc = session.open(&small.character(14), &[]);
    let values = |session: &Session| {
        ["g:score0", "g:mod0", "g:f0"].map(|f| {
            let v = session.field(pc, f).unwrap();
            assert!(v.error.is_none(), "{f}: {:?}", v.error);
            format!("{:?}", v.value)
        })
    };
    let before = values(&session);
    session
        .set_value(pc, Synthetic::EDITED, Some(json!(16)))
        .unwrap();
    let after = values(&session);
    expect_test::expect![[r#"
        [
            [
                "Some(Int(14))",
                "Some(Int(2))",
                "Some(Int(6))",
            ],
            [
                "Some(Int(16))",
                "Some(Int(3))",
                "Some(Int(8))",
            ],
        ]
    "#]]
    .assert_debug_eq(&[before, after]);
}
