//! Handoffs answered from open characters: the participant's action worked out on its own
//! character, as `ocf act` runs it (EA "Handoffs" 4: the run's `action` and `params`, a view of
//! each character its `participants` name, from that character's own computed sheet).

use ocf_engine::{CharacterId, Session};
use serde_json::{Value as Json, json};

use super::{Handoffs, Odds, odds};
use crate::error::ActionError;
use crate::run::Limits;
use crate::state::StartInput;

/// How deep handoffs may hand off in turn (as `ocf act`'s).
const MAX_DEPTH: usize = 8;

/// Characters open in sessions, by their file's `id`.
pub struct Characters<'a> {
    pub list: Vec<(String, &'a Session, CharacterId)>,
    depth: usize,
}

impl<'a> Characters<'a> {
    pub fn new(list: Vec<(String, &'a Session, CharacterId)>) -> Characters<'a> {
        Characters { list, depth: 0 }
    }

    /// The view `{ id, values }` of character `id`: every value of its own computed sheet.
    pub fn view(&self, id: &str) -> Result<Json, ActionError> {
        let (_, session, cid) = self.find(id)?;
        let sheet = session
            .sheet_json(*cid)
            .map_err(|e| ActionError::new("unknown-character", e.to_string()))?;
        let values: serde_json::Map<String, Json> = sheet["values"]
            .as_object()
            .into_iter()
            .flatten()
            .filter_map(|(k, v)| Some((k.clone(), v.get("value")?.clone())))
            .collect();
        Ok(json!({ "id": id, "values": values }))
    }

    fn find(&self, id: &str) -> Result<&(String, &'a Session, CharacterId), ActionError> {
        self.list.iter().find(|(i, _, _)| i == id).ok_or_else(|| {
            ActionError::new(
                "invalid-participants",
                format!("the handoff names `{id}`, whose character was not given"),
            )
        })
    }
}

impl Handoffs for Characters<'_> {
    fn odds(&mut self, needs: &Json) -> Result<Odds, ActionError> {
        let id = needs["participant"]["id"].as_str().unwrap_or_default();
        if self.depth >= MAX_DEPTH {
            return Err(ActionError::new(
                "distribution-too-large",
                format!("handoffs nested deeper than {MAX_DEPTH}"),
            ));
        }
        let (_, session, cid) = *self.find(id)?;
        let run = &needs["run"];
        let mut input = StartInput::default();
        input.action.id = run["action"].as_str().unwrap_or_default().to_owned();
        input.params = run["params"].as_object().cloned().unwrap_or_default();
        for (role, ids) in run["participants"].as_object().into_iter().flatten() {
            let mut views = Vec::new();
            for id in ids.as_array().into_iter().flatten() {
                views.push(self.view(id.as_str().unwrap_or_default())?);
            }
            input.participants.insert(role.clone(), Json::Array(views));
        }
        let db = session
            .db(cid)
            .map_err(|e| ActionError::new("unknown-character", e.to_string()))?;
        let character = session
            .character_input(cid)
            .ok_or_else(|| ActionError::new("unknown-character", "the character is not open"))?;
        self.depth += 1;
        let result = odds(db, character, &input, self, Limits::default());
        self.depth -= 1;
        result.map_err(|mut e| {
            e.message = format!(
                "{} (in {id}'s own run of {}, handed off at step `{}`)",
                e.message,
                input.action.id,
                needs["step"].as_str().unwrap_or_default()
            );
            e
        })
    }
}
