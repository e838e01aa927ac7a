//! Applied content (DA, "Applying content"; EC, "Immunities"): `applyEffect`, `removeEffect`,
//! `toggleEffect`. Removing and toggling work on an entry an immunity blocks.

use ocf_model::{AppliedEntry, Change, Id, Keyed, Literal};
use serde_json::{Map, Value as Json, json};

use super::applier::{Applier, made_id};
use super::batch::ChangeError;
use super::eval::Scope;
use super::targets::unknown_id;

impl Applier<'_, '_> {
    /// `applyEffect`: an entry of `applied` for the content `source` gives; its ID given (unique,
    /// else `duplicate-id`) or `<source local id, dots as hyphens>-<n>`; `active` (default true)
    /// and `state` evaluated.
    pub fn apply_effect(
        &mut self,
        path: &str,
        change: &Change,
        scope: &Scope,
    ) -> Result<Map<String, Json>, ChangeError> {
        let Some(source) = &change.source else {
            return Err(ChangeError::new(
                "schema-error",
                format!("{path}/source"),
                "an `applyEffect` needs `source`",
            ));
        };
        let text = self.eval_string(source, scope, &format!("{path}/source"))?;
        let source = self.content_id(&text, &format!("{path}/source"))?;
        let taken = |file: &ocf_model::Character, id: &str| {
            file.applied.iter().any(|a| a.id == id)
                || file
                    .inventory
                    .iter()
                    .chain(file.features.iter())
                    .any(|c| c.id == id)
        };
        let id = match &change.id {
            Some(id) if taken(&self.file, id) || self.copy_input(id).is_some() => {
                return Err(ChangeError::new(
                    "duplicate-id",
                    format!("{path}/id"),
                    format!("the character already has an entry `{id}`"),
                )
                .with_data(json!({ "id": id })));
            }
            Some(id) => id.clone(),
            None => made_id(&source, |id| taken(&self.file, id)),
        };
        let active = match &change.active {
            Some(f) => self.eval_bool(f, scope, &format!("{path}/active"))?,
            None => true,
        };
        let decls: Vec<(String, ocf_model::StateDecl)> =
            crate::view::state_decls(&self.ruleset, &source, &[])
                .into_iter()
                .map(|(k, d)| (k.to_owned(), d.clone()))
                .collect();
        let mut state = Keyed::<Literal>::default();
        for (key, formula) in change.state.iter() {
            let at = format!("{path}/state/{key}");
            let Some((_, decl)) = decls.iter().find(|(k, _)| k == key) else {
                return Err(ChangeError::new(
                    "unknown-key",
                    at,
                    format!("`{source}` declares no state `{key}`"),
                )
                .with_data(json!({ "key": key })));
            };
            // EA "Other steps": evaluated "with `item` the source's item, the receiving
            // character's fields and `batch`".
            let mut with_item = scope.clone();
            with_item.item = Some((source.clone(), Vec::new()));
            let value = self.eval(formula.as_str(), &with_item, &at)?;
            let value = super::fields::typed(Some(decl.r#type), value, &at)?;
            state.0.insert(key.to_owned(), value.to_json());
        }
        self.file.applied.push(AppliedEntry {
            id: id.clone(),
            source: Id::from(source.as_str()),
            active: (!active).then_some(false),
            state: state.clone(),
        });
        let mut record = Map::new();
        record.insert("id".into(), id.into());
        record.insert("source".into(), source.into());
        record.insert(
            "state".into(),
            serde_json::to_value(&state).unwrap_or_default(),
        );
        Ok(record)
    }

    /// The applied entries `id` or `applied` names (`unknown-id` for a missing ID; a query that
    /// matches nothing is soft).
    fn applied_targets(
        &mut self,
        path: &str,
        change: &Change,
        scope: &Scope,
    ) -> Result<Vec<usize>, ChangeError> {
        if let Some(id) = &change.id {
            return match self.file.applied.iter().position(|a| &a.id == id) {
                Some(i) => Ok(vec![i]),
                None => Err(unknown_id(&format!("{path}/id"), id)),
            };
        }
        let Some(query) = &change.applied else {
            return Err(ChangeError::new(
                "schema-error",
                path,
                "the change needs `id` or `applied`",
            ));
        };
        let found = self.query_applied(query, scope, path)?;
        if found.is_empty() {
            self.soft(ChangeError::new(
                "no-match",
                format!("{path}/applied"),
                "the query matches nothing; nothing changed",
            ))?;
        }
        Ok(found)
    }

    /// `removeEffect`.
    pub fn remove_effect(
        &mut self,
        path: &str,
        change: &Change,
        scope: &Scope,
    ) -> Result<Map<String, Json>, ChangeError> {
        let found = self.applied_targets(path, change, scope)?;
        let ids: Vec<String> = found
            .iter()
            .map(|&i| self.file.applied[i].id.clone())
            .collect();
        self.file.applied.retain(|a| !ids.contains(&a.id));
        let mut record = Map::new();
        record.insert("entries".into(), ids.into());
        Ok(record)
    }

    /// `toggleEffect`: `active` as given, else flipped.
    pub fn toggle_effect(
        &mut self,
        path: &str,
        change: &Change,
        scope: &Scope,
    ) -> Result<Map<String, Json>, ChangeError> {
        let found = self.applied_targets(path, change, scope)?;
        let mut done = Vec::new();
        for i in found {
            let s = self.applied_scope(scope, i);
            let now = self.file.applied[i].active.unwrap_or(true);
            let active = match &change.active {
                Some(f) => self.eval_bool(f, &s, &format!("{path}/active"))?,
                None => !now,
            };
            self.file.applied[i].active = (!active).then_some(false);
            done.push(json!({ "id": self.file.applied[i].id, "active": active }));
        }
        let mut record = Map::new();
        record.insert("entries".into(), Json::Array(done));
        Ok(record)
    }
}
