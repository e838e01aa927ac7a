//! A proposed sheet shares the given sheet's work (issue 15): a field the change doesn't reach is
//! the given sheet's value, one it reaches is computed again. (What runs is counted by
//! `ocf_engine::derived`'s own tests: debug builds compute every shared value again, to check it.)

mod common;

use ocf_engine::Session;
use ocf_synthetic::Synthetic;
use serde_json::json;

/// `g:proposed` raising `g:score0` to `to`, then reading `read` on the proposed sheet: what it
/// proposes for `g:score1` (`read`'s value there), and `read`'s value on a sheet of the character
/// with the score saved as `to` from the start.
fn run(read: &str, to: i64) -> (serde_json::Value, serde_json::Value) {
    let size = Synthetic::with_fields(200).expect("a size");
    let mut session = Session::new(size.ruleset_with_proposed(read));
    let pc = session.open(&size.character(14), &[]);
    session.sheet(pc).expect("the sheet");
    let call = json!({ "action": { "id": "g:proposed" }, "params": { "to": to } });
    let out = common::start(&session, pc, call);
    let mut fresh = Session::new(size.ruleset());
    let id = fresh.open(&size.character(to), &[]);
    let expected = fresh.field(id, &format!("g:{read}")).expect("open");
    let expected = ocf_engine::sheet::field_json(&expected)["value"].clone();
    (
        out["proposedChanges"][1]["change"]["value"].clone(),
        expected,
    )
}

#[test]
fn a_field_the_change_does_not_reach_is_the_given_sheets() {
    // `g:f11` reads `g:f1` and `g:mod1`, which read `g:score1`: none reads the raised score.
    for to in [14, 18] {
        let (value, expected) = run("f11", to);
        assert_eq!(value, expected);
    }
}

#[test]
fn a_field_the_change_reaches_is_computed_again() {
    // `g:f10` reads `g:f0` and `g:mod0`, which read `g:score0`.
    let (value, expected) = run("f10", 18);
    assert_eq!(value, expected);
    assert_ne!(value, run("f10", 14).0);
}
