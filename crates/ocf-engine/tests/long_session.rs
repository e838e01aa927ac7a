//! A long session's records stay bounded by what is open (issue 19): a cycle of edits that ends
//! where it started (a copy added then removed, a value edited and put back, a copy equipped and
//! unequipped, a character opened and closed) leaves the database holding what it held before.

use ocf_engine::Session;
use ocf_engine::input::CopyList;
use ocf_engine::synthetic::Synthetic;
use serde_json::json;

#[test]
fn records_return_to_their_baseline_after_cycles_of_adds_and_removes() {
    let size = Synthetic::with_fields(200).unwrap();
    let mut session = Session::new(size.ruleset());
    let pc = session.open(&size.character(14), &[]);
    let extra: ocf_model::CopyEntry =
        serde_json::from_value(json!({ "id": "extra", "item": "g:item3" })).unwrap();
    let cycle = |session: &mut Session| {
        session.add_copy(pc, CopyList::Inventory, &extra).unwrap();
        session.changes(pc).unwrap();
        session.set_value(pc, "g:score1", Some(json!(15))).unwrap();
        session.equip(pc, "c1", true).unwrap();
        session.changes(pc).unwrap();
        session.remove_copy(pc, "extra").unwrap();
        session.set_value(pc, "g:score1", Some(json!(12))).unwrap();
        session.equip(pc, "c1", false).unwrap();
        session.changes(pc).unwrap();
        let other = session.open(&size.character(10), &[]);
        session.changes(other).unwrap();
        session.close(other);
    };
    // The first cycles make the inputs the later ones reuse (a free copy, a closed character's),
    // and the keys of each pairing of a character with a copy slot (the second cycle's closed
    // character takes a copy slot the first one's didn't).
    cycle(&mut session);
    cycle(&mut session);
    let baseline = session.records();
    for round in 0..10 {
        cycle(&mut session);
        assert_eq!(session.records(), baseline, "after cycle {round}");
    }
    assert!(baseline.free_slots > 0);
    let score = session.field(pc, "g:score1").unwrap();
    assert_eq!(score.value.as_ref().map(|v| v.to_json()), Some(json!(12)));
}
