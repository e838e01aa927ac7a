//! A session running actions with proposed sheets keeps its memory bounded (issue 19): each
//! proposed sheet derives the character's inputs in its database, which salsa never frees, and
//! `Session::reclaim` gives them back once they outgrow the character.

mod common;

use ocf_engine::Session;
use ocf_synthetic::Synthetic;
use serde_json::json;

/// The generated character's ruleset with `g:proposed`: a changes step, then a step reading a
/// field downstream of it on the proposed sheet (`Synthetic::ruleset_with_proposed`).
fn session() -> (Session, ocf_engine::CharacterId) {
    let size = Synthetic::with_fields(200).expect("a size");
    let rules = size.ruleset_with_proposed("f150");
    let mut session = Session::new(rules);
    let pc = session.open(&size.character(14), &[]);
    (session, pc)
}

fn run(session: &Session, pc: ocf_engine::CharacterId) -> serde_json::Value {
    common::start(session, pc, json!({ "action": { "id": "g:proposed" } }))
}

#[test]
fn proposed_sheets_are_given_back_and_the_results_stay_the_same() {
    let (mut session, pc) = session();
    let first = run(&session, pc);
    let read = &first["proposedChanges"][1]["change"];
    assert_eq!(read["field"], "g:score1");
    let baseline = session.records().inputs;
    run(&session, pc);
    // What one proposed sheet leaves: about the character's own inputs.
    let per_run = session.records().inputs - baseline;
    assert!(per_run > 0, "a proposed sheet derives inputs");
    let mut most = 0;
    let mut reclaimed = 0;
    // Until the derived inputs have outgrown the character twice over, within a bound.
    for _ in 0..2000 {
        if reclaimed == 3 {
            break;
        }
        assert_eq!(
            run(&session, pc),
            first,
            "an action's result doesn't depend on a reclaim"
        );
        if session.reclaim(pc).expect("open") {
            reclaimed += 1;
        }
        most = most.max(session.records().inputs);
    }
    assert!(
        reclaimed >= 2,
        "proposed sheets outgrow the character again and again"
    );
    // Without reclaim the inputs grow by `per_run` on every run, 100 times over; with it they stay
    // within what the reclaim's threshold lets through, one more run's, and the baseline.
    let allowed = baseline + per_run + ocf_engine::RECLAIM_AFTER * per_run.max(64);
    assert!(
        most <= allowed,
        "inputs stayed within a bound: at most {most}, allowed {allowed} ({per_run} a run)"
    );
    // The session goes on as before: an edit and its changes.
    session.sheet(pc).expect("the sheet");
    session.changes(pc).expect("changes");
}

#[test]
fn reclaim_leaves_a_database_without_derived_inputs_alone() {
    let (mut session, pc) = session();
    let c = session.character_input(pc);
    assert!(!session.reclaim(pc).expect("open"));
    assert_eq!(session.character_input(pc), c, "nothing was rebuilt");
}

/// `g:proposed` with the score raised to `to`, reading `g:f11` (which reads `g:score1`, not the
/// raised score) on the proposed sheet: what it proposes for `g:score1` is that field's value.
fn read_f11(session: &Session, pc: ocf_engine::CharacterId, to: i64) -> serde_json::Value {
    let call = json!({ "action": { "id": "g:proposed" }, "params": { "to": to } });
    common::start(session, pc, call)["proposedChanges"][1]["change"]["value"].clone()
}

#[test]
fn the_session_a_call_leaves_follows_the_character_it_is_kept_for() {
    let size = Synthetic::with_fields(200).expect("a size");
    let rules = size.ruleset_with_proposed("f11");
    let mut session = Session::new(rules.clone());
    let pc = session.open(&size.character(14), &[]);
    // What a session of its own answers, for the file as it is then.
    let fresh = |file: &ocf_model::Character, to: i64| {
        let mut own = Session::new(rules.clone());
        let id = own.open(file, &[]);
        read_f11(&own, id, to)
    };
    let first = read_f11(&session, pc, 17);
    assert_eq!(first, fresh(&size.character(14), 17));
    // Another batch, then an edit of what the read field reads: the kept session is brought
    // back to the file as it is now before the batch is applied.
    assert_eq!(read_f11(&session, pc, 18), first);
    session
        .set_value(pc, "g:score1", Some(json!(20)))
        .expect("open");
    let edited = session.file(pc).expect("open").clone();
    let after = read_f11(&session, pc, 18);
    assert_ne!(after, first, "the edit reaches the proposed sheet");
    assert_eq!(after, fresh(&edited, 18));
    // A reclaim passes the kept session to the rebuilt database; the results stay the same.
    let mut reclaimed = 0;
    for _ in 0..200 {
        assert_eq!(read_f11(&session, pc, 17), after);
        reclaimed += usize::from(session.reclaim(pc).expect("open"));
    }
    assert!(reclaimed > 0, "200 proposed sheets outgrow the character");
}
