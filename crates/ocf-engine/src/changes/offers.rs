//! `offerFollowUp` and `clearFollowUp` (DA, "Offering a follow-up"): stored ephemeral offers in the
//! file's `followUps`; `setExtension` and `setHomebrew`, the app-only changes (their keys
//! reconstructed: decisions.md, issue 12).

use ocf_model::{Change, Id, Keyed, Literal, StoredOffer};
use serde_json::{Map, Value as Json, json};

use super::applier::{Applier, made_id};
use super::batch::ChangeError;
use super::eval::Scope;

impl Applier<'_, '_> {
    /// A follow-up's qualified ID: one content or a content type declares (`<content>#<id>`,
    /// `<pack>:<type>#<id>`, as computeSheet's stored offers resolve them), or a rules one by
    /// qualified or local ID.
    fn follow_up_id(&self, id: &str, at: &str) -> Result<String, ChangeError> {
        if self.ruleset.follow_ups.get(id).is_some()
            || (id.contains('#') && crate::offers::follow_up_exists(&self.ruleset, id, None))
        {
            return Ok(id.to_owned());
        }
        self.ruleset
            .packs
            .iter()
            .rev()
            .map(|p| format!("{}:{id}", p.id))
            .find(|q| self.ruleset.follow_ups.get(q).is_some())
            .ok_or_else(|| {
                ChangeError::new("unknown-follow-up", at, format!("no follow-up `{id}`"))
                    .with_data(json!({ "followUp": id }))
            })
    }

    /// `offerFollowUp`: stores the offer, its ID `<follow-up local id, dots as hyphens>-<n>`.
    pub fn offer_follow_up(
        &mut self,
        path: &str,
        change: &Change,
        scope: &Scope,
    ) -> Result<Map<String, Json>, ChangeError> {
        let Some(follow_up) = &change.follow_up else {
            return Err(ChangeError::new(
                "schema-error",
                format!("{path}/followUp"),
                "the change needs `followUp`",
            ));
        };
        let follow_up = self.follow_up_id(follow_up.as_str(), &format!("{path}/followUp"))?;
        let source = match &change.source {
            Some(f) => Some(self.eval_string(f, scope, &format!("{path}/source"))?),
            None => None,
        };
        let mut params = Keyed::<Literal>::default();
        for (name, formula) in change.params.iter() {
            let value = self.eval(formula.as_str(), scope, &format!("{path}/params/{name}"))?;
            params.0.insert(name.to_owned(), value.to_json());
        }
        let id = made_id(&follow_up, |id| {
            self.file.follow_ups.iter().any(|o| o.id == id)
        });
        self.file.follow_ups.push(StoredOffer {
            id: id.clone(),
            follow_up: Id::from(follow_up.as_str()),
            source: source.map(|s| Id::from(s.as_str())),
            params,
        });
        let mut record = Map::new();
        record.insert("id".into(), id.into());
        record.insert("followUp".into(), follow_up.into());
        Ok(record)
    }

    /// `clearFollowUp`: deletes a stored offer; one already gone is soft (a run from an offer
    /// ends with clearing it, and the app may have cleared it first).
    pub fn clear_follow_up(
        &mut self,
        path: &str,
        change: &Change,
    ) -> Result<Map<String, Json>, ChangeError> {
        let Some(id) = &change.id else {
            return Err(ChangeError::new(
                "schema-error",
                format!("{path}/id"),
                "the change needs `id`",
            ));
        };
        let before = self.file.follow_ups.len();
        self.file.follow_ups.retain(|o| &o.id != id);
        if before == self.file.follow_ups.len() {
            self.soft(
                ChangeError::new(
                    "unknown-id",
                    format!("{path}/id"),
                    format!("no stored offer `{id}`"),
                )
                .with_data(json!({ "id": id })),
            )?;
        }
        let mut record = Map::new();
        record.insert("id".into(), id.clone().into());
        Ok(record)
    }

    /// `setExtension { namespace, data }`: the app's data under its namespace (`null` removes it).
    pub fn set_extension(
        &mut self,
        path: &str,
        change: &Change,
    ) -> Result<Map<String, Json>, ChangeError> {
        let Some(namespace) = change.namespace.as_ref().filter(|n| !n.is_empty()) else {
            return Err(ChangeError::new(
                "schema-error",
                format!("{path}/namespace"),
                "a `setExtension` needs `namespace`",
            ));
        };
        if let Some(data) = &change.data {
            // What applyChanges writes, the engine must read back (decisions.md, issue 36).
            super::readable::check_value(data, 2, &format!("{path}/data"))?;
        }
        match change.data.clone().unwrap_or(Json::Null) {
            Json::Null => {
                self.file.extensions.0.shift_remove(namespace.as_str());
            }
            data => {
                self.file.extensions.0.insert(namespace.clone(), data);
            }
        }
        let mut record = Map::new();
        record.insert("namespace".into(), namespace.clone().into());
        Ok(record)
    }

    /// `setHomebrew { homebrew? }`: the character's homebrew replaced, checked again by loading
    /// it (`homebrew-error`, its errors in `data`).
    pub fn set_homebrew(
        &mut self,
        path: &str,
        change: &Change,
    ) -> Result<Map<String, Json>, ChangeError> {
        let mut file = self.file.clone();
        file.homebrew = change.homebrew.clone();
        if file.homebrew.is_some() {
            let base = self.session.ruleset().clone();
            if let Err(errors) = ocf_load::load_homebrew(&base, &file) {
                return Err(ChangeError::new(
                    "homebrew-error",
                    format!("{path}/homebrew"),
                    "the homebrew does not load",
                )
                .with_data(json!({ "errors": errors })));
            }
        }
        self.file.homebrew = file.homebrew;
        self.sync();
        // The ruleset the later changes see is the new one.
        let c = self.input();
        self.ruleset = self.deep(move |db| c.ruleset(db).ruleset(db).clone());
        Ok(Map::new())
    }
}
