//! What the tests of the proposed sheet share: an action started on a session's open character.

use ocf_actions::{Limits, StartInput};
use ocf_dice::SeededDice;
use ocf_engine::{CharacterId, Session};

/// startAction of `call` (its JSON input) on character `pc` of `session`, with seeded dice.
pub fn start(session: &Session, pc: CharacterId, call: serde_json::Value) -> serde_json::Value {
    let call: StartInput = serde_json::from_value(call).expect("a call");
    ocf_actions::start_action(
        session.db(pc).expect("open"),
        session.character_input(pc).expect("open"),
        &call,
        &mut SeededDice::new(1),
        Limits::default(),
    )
    .expect("runs")
}
