//! A long session's records stay bounded by what is open (issue 19): cycles of edits that end
//! where they started (a copy added then removed, its ID new each time, a value edited and put
//! back, a copy equipped and unequipped, a change batch whose formula the session has not seen
//! before, a character opened and closed) leave the session holding what it held before, however
//! many cycles run.

use ocf_engine::Session;
use ocf_engine::changes::{Options, read_batch};
use ocf_engine::input::CopyList;
use ocf_synthetic::Synthetic;
use serde_json::json;

/// How many cycles the tests run past their warm-up: enough for anything a cycle leaves behind to
/// show as growth, not as one cycle's noise.
const CYCLES: usize = 60;

#[test]
fn records_stay_at_their_baseline_over_many_cycles_of_edits() {
    let size = Synthetic::with_fields(200).unwrap();
    let mut session = Session::new(size.ruleset());
    let pc = session.open(&size.character(14), &[]);
    let cycle = |session: &mut Session, round: usize| {
        // A copy with an ID new each round, as a client may choose.
        let id = format!("extra{round}");
        let extra: ocf_model::CopyEntry =
            serde_json::from_value(json!({ "id": id, "item": "g:item3" })).unwrap();
        session.add_copy(pc, CopyList::Inventory, &extra).unwrap();
        session.changes(pc).unwrap();
        // A formula text new to the session each round, as a client's batches bring.
        let batch = read_batch(&json!([
            { "type": "set", "field": "g:score1", "value": format!("15 + 0 * {round}") }
        ]))
        .unwrap();
        session.apply(pc, &batch, Options::default()).unwrap();
        session.equip(pc, "c1", true).unwrap();
        session.changes(pc).unwrap();
        session.remove_copy(pc, &id).unwrap();
        session.set_value(pc, "g:score1", Some(json!(12))).unwrap();
        session.equip(pc, "c1", false).unwrap();
        session.changes(pc).unwrap();
        // A field name nothing declares, new each round, as a client may ask for.
        let unknown = session.field(pc, &format!("g:nothing{round}")).unwrap();
        assert!(unknown.error.is_some());
        let other = session.open(&size.character(10), &[]);
        session.changes(other).unwrap();
        session.close(other);
    };
    // The first cycles make the inputs the later ones reuse (a free copy, a closed character's),
    // and the keys of each pairing of a character with a copy slot (the second cycle's closed
    // character takes a copy slot the first one's didn't).
    cycle(&mut session, 0);
    cycle(&mut session, 1);
    let baseline = session.records();
    for round in 2..2 + CYCLES {
        cycle(&mut session, round);
        assert_eq!(session.records(), baseline, "after cycle {round}");
    }
    assert!(baseline.free_slots > 0);
    let score = session.field(pc, "g:score1").unwrap();
    assert_eq!(score.value.as_ref().map(|v| v.to_json()), Some(json!(12)));
}

#[test]
fn opening_and_closing_many_characters_beside_an_open_one_leaves_what_it_held_alone() {
    let size = Synthetic::with_fields(200).unwrap();
    let mut session = Session::new(size.ruleset());
    let pc = session.open(&size.character(14), &[]);
    session.changes(pc).unwrap();
    let alone = session.records();
    for round in 0..CYCLES {
        // Characters of other saved values, some edited while open.
        let other = session.open(&size.character(10 + (round % 5) as i64), &[]);
        session.sheet(other).unwrap();
        if round % 3 == 0 {
            session
                .set_value(other, "g:score2", Some(json!(round)))
                .unwrap();
            session.sheet(other).unwrap();
        }
        assert!(session.records().total() > alone.total());
        session.close(other);
        session.changes(pc).unwrap();
        // A closed character's records go with it, whatever it did while open.
        assert_eq!(session.records(), alone, "after cycle {round}");
    }
}

#[test]
fn opening_and_closing_a_character_costs_the_open_ones_no_check() {
    let size = Synthetic::with_fields(200).unwrap();
    let mut session = Session::with_execution_log(size.ruleset());
    let pc = session.open(&size.character(14), &[]);
    session.changes(pc).unwrap();
    for round in 0..3 {
        let other = session.open(&size.character(10 + round), &[]);
        session.sheet(other).unwrap();
        session
            .set_value(other, "g:score1", Some(json!(9)))
            .unwrap();
        session.sheet(other).unwrap();
        session.close(other);
        // The closed character's queries were its own database's: none is left to report.
        session.take_validated();
        session.take_executed();
        session.changes(pc).unwrap();
        let checked = session.take_validated();
        assert_eq!(checked, Vec::<String>::new(), "after cycle {round}");
        assert_eq!(session.take_executed(), Vec::<String>::new());
    }
}

#[test]
fn listing_options_on_characters_opened_and_closed_holds_the_records_of_one_listing() {
    use ocf_engine::options::path::ChoicePath;
    let size = Synthetic::with_fields(200).unwrap();
    let mut session = Session::new(size.ruleset_with_choice(5));
    let path = ChoicePath {
        entry: None,
        choice: vec![Synthetic::CHOICE.into()],
    };
    let pc = session.open(&size.character(14), &[]);
    let cycle = |session: &mut Session, round: usize| {
        // Each listing's trials are put back at its end; each closed character's memos go with
        // its database.
        let listed = session.list_options(pc, &path).unwrap();
        assert_eq!(listed.options.len(), 5);
        let other = session.open(&size.character(10 + (round % 3) as i64), &[]);
        let listed = session.list_options(other, &path).unwrap();
        assert_eq!(listed.options.len(), 5);
        session.changes(other).unwrap();
        session.close(other);
        session.changes(pc).unwrap();
    };
    cycle(&mut session, 0);
    cycle(&mut session, 1);
    let baseline = session.records();
    for round in 2..2 + CYCLES {
        cycle(&mut session, round);
        assert_eq!(session.records(), baseline, "after cycle {round}");
    }
}
