//! Changes to copies (DA, "Adding items", "Spending a copy's quantity", "Equipping and templates",
//! "Changes to copies by query"): `addItem`, `removeItem`, `equip`, `setQuantity` /
//! `adjustQuantity`, `setState` / `adjustState`, `applyTemplate` / `removeTemplate`.

use ocf_formula::Value;
use ocf_model::{Change, ChangeType, Computed, CopyEntry, EntryRef, Id, Literal, Namespace};
use serde_json::{Map, Value as Json, json};

use super::applier::{Applier, made_id};
use super::batch::ChangeError;
use super::eval::Scope;
use super::targets::{Target, unknown_id};

impl Applier<'_, '_> {
    /// A content ID as a change gives it: qualified, or local in the change's pack.
    pub fn content_id(&self, id: &str, path: &str) -> Result<String, ChangeError> {
        if self.ruleset.item(id).is_some() {
            return Ok(id.to_owned());
        }
        let found = self
            .ruleset
            .resolve(&self.pack, id, Namespace::Content)
            .or_else(|| {
                self.ruleset
                    .packs
                    .iter()
                    .find_map(|p| self.ruleset.resolve(&p.id, id, Namespace::Content))
            });
        found.ok_or_else(|| {
            ChangeError::new("unknown-reference", path, format!("no content `{id}`"))
                .with_data(json!({ "id": id }))
        })
    }

    fn taken(&self, id: &str) -> bool {
        self.file
            .inventory
            .iter()
            .chain(self.file.features.iter())
            .any(|c| c.id == id)
            || self.file.applied.iter().any(|a| a.id == id)
            || self.copy_input(id).is_some()
    }

    /// `addItem`: a new copy, its ID given (unique in the file, else `duplicate-id`) or made
    /// (`<item local id, dots as hyphens>-<n>`); its item content, not a template
    /// (`unknown-reference`); `quantity`, `equipped` and state evaluated; its formula state
    /// defaults evaluated and saved; its picks checked as a `choose` of each would be.
    pub fn add_item(
        &mut self,
        path: &str,
        change: &Change,
        scope: &Scope,
    ) -> Result<Map<String, Json>, ChangeError> {
        let Some(EntryRef::New(new)) = &change.entry else {
            return Err(ChangeError::new(
                "schema-error",
                format!("{path}/entry"),
                "an `addItem` needs its new copy, `entry: { item, … }`",
            ));
        };
        let at = format!("{path}/entry");
        let item_text = self.eval_string(&new.item, scope, &format!("{at}/item"))?;
        let item = self.content_id(&item_text, &format!("{at}/item"))?;
        let entry = self.ruleset.item(&item).cloned();
        if entry
            .as_ref()
            .is_some_and(|e| e.item.template == Some(true))
        {
            return Err(ChangeError::new(
                "unknown-reference",
                format!("{at}/item"),
                format!("`{item}` is a template, not content a copy holds"),
            )
            .with_data(json!({ "id": item })));
        }
        let mut templates = Vec::new();
        for (i, t) in new.templates.iter().enumerate() {
            let t = self.content_id(t.as_str(), &format!("{at}/templates/{i}"))?;
            if self.ruleset.item(&t).and_then(|e| e.item.template) != Some(true) {
                return Err(ChangeError::new(
                    "unknown-reference",
                    format!("{at}/templates/{i}"),
                    format!("`{t}` is not a template"),
                )
                .with_data(json!({ "id": t })));
            }
            templates.push(t);
        }
        let id = match &new.id {
            Some(id) if self.taken(id) => {
                return Err(ChangeError::new(
                    "duplicate-id",
                    format!("{at}/id"),
                    format!("the character already has an entry `{id}`"),
                )
                .with_data(json!({ "id": id })));
            }
            Some(id) => id.clone(),
            None => made_id(&item, |id| self.taken(id)),
        };
        let quantity = match &new.quantity {
            Some(q) => {
                let n = self.eval_int(q, scope, &format!("{at}/quantity"))?;
                Some(n.max(0) as u64)
            }
            None => None,
        };
        let equipped = match &new.equipped {
            Some(e) => self.eval_bool(e, scope, &format!("{at}/equipped"))?,
            None => false,
        };
        let decls: Vec<(String, ocf_model::StateDecl)> =
            crate::view::state_decls(&self.ruleset, &item, &templates)
                .into_iter()
                .map(|(k, d)| (k.to_owned(), d.clone()))
                .collect();
        let mut state = ocf_model::Keyed::<Literal>::default();
        for (key, formula) in new.state.iter() {
            let sat = format!("{at}/state/{key}");
            let Some((_, decl)) = decls.iter().find(|(k, _)| k == key) else {
                return Err(ChangeError::new(
                    "unknown-key",
                    sat,
                    format!("`{item}` declares no state `{key}`"),
                )
                .with_data(json!({ "key": key })));
            };
            let value = self.eval(formula.as_str(), scope, &sat)?;
            let value = super::fields::typed(Some(decl.r#type), value, &sat)?;
            state.0.insert(key.to_owned(), value.to_json());
        }
        // Formula defaults, as addItem evaluates them: `item` the new copy's item with its
        // templates, in the content type's pack (EC, "Standard copies").
        let type_pack = entry
            .as_ref()
            .and_then(|e| e.type_name())
            .and_then(|t| self.ruleset.content_type(t))
            .map(|t| t.pack.clone())
            .unwrap_or_else(|| self.pack.clone());
        for (key, decl) in &decls {
            if state.get(key).is_some() {
                continue;
            }
            if let Some(Computed::Formula { formula }) = &decl.default {
                let mut s = Scope::in_pack(type_pack.clone());
                s.item = Some((item.clone(), templates.clone()));
                let sat = format!("{at}/state/{key}");
                let value = self.eval(formula.as_str(), &s, &sat)?;
                let value = super::fields::typed(Some(decl.r#type), value, &sat)?;
                state.0.insert(key.to_owned(), value.to_json());
            }
        }
        let mut copy = CopyEntry::new(id.clone(), Id::from(item.as_str()));
        copy.quantity = quantity.filter(|q| *q != 1);
        copy.equipped = equipped.then_some(true);
        copy.state = state;
        copy.templates = templates.iter().map(|t| Id::from(t.as_str())).collect();
        // Features for content of a type that isn't carried... the file's lists: content with
        // a content type goes to inventory unless it is a feature-like type; the chapters give
        // no flag, so `addItem` adds to `inventory` (decisions.md, issue 12).
        self.file.inventory.push(copy);
        self.sync();
        // Picks, each checked as a `choose` of it would be, nested picks under their pick's path.
        self.add_picks(&format!("{at}/choices"), &id, &[], &new.choices, scope)?;
        let mut record = Map::new();
        record.insert("id".into(), id.into());
        record.insert("item".into(), item.into());
        Ok(record)
    }

    /// An added copy's picks at `prefix` (a choice path's segments through earlier picks), each
    /// checked as a `choose` of it would be (DA, "Adding items"), then each pick's own picks under
    /// `[..prefix, key, option]`.
    fn add_picks(
        &mut self,
        at: &str,
        id: &str,
        prefix: &[String],
        choices: &ocf_model::Keyed<Vec<ocf_model::NewPick>>,
        scope: &Scope,
    ) -> Result<(), ChangeError> {
        for (key, picks) in choices.iter() {
            for (n, pick) in picks.iter().enumerate() {
                let here = format!("{at}/{key}/{n}");
                let option = match &pick.option {
                    Computed::Literal(v) => v.clone(),
                    Computed::Formula { formula } => self
                        .eval(formula.as_str(), scope, &format!("{here}/option"))?
                        .to_json(),
                };
                let mut segments = prefix.to_vec();
                segments.push(key.to_owned());
                self.pick_into(&here, Some(id), &segments, option.clone())?;
                if !pick.choices.is_empty() {
                    segments.push(match &option {
                        Literal::String(s) => s.clone(),
                        other => other.to_string(),
                    });
                    self.add_picks(
                        &format!("{here}/choices"),
                        id,
                        &segments,
                        &pick.choices,
                        scope,
                    )?;
                }
            }
        }
        Ok(())
    }

    /// `removeItem`: the copy, or every copy the query matches.
    pub fn remove_item(
        &mut self,
        path: &str,
        change: &Change,
        scope: &Scope,
    ) -> Result<Map<String, Json>, ChangeError> {
        let targets = self.targets(change, scope, path, false)?;
        let mut removed = Vec::new();
        for target in targets {
            let Target::Copy(id) = target else { continue };
            let before = self.file.inventory.len() + self.file.features.len();
            self.file.inventory.retain(|c| c.id != id);
            self.file.features.retain(|c| c.id != id);
            if before == self.file.inventory.len() + self.file.features.len() {
                // An unsaved standard copy: it is there while its source holds it.
                return Err(ChangeError::new(
                    "standard-copy",
                    format!("{path}/entry"),
                    format!(
                        "`{id}` is a standard copy, there while the content that holds it is active"
                    ),
                )
                .with_data(json!({ "id": id })));
            }
            removed.push(Json::String(id));
        }
        let mut record = Map::new();
        record.insert("copies".into(), Json::Array(removed));
        Ok(record)
    }

    /// `equip`: `equipped` on the copy or every copy matched.
    pub fn equip(
        &mut self,
        path: &str,
        change: &Change,
        scope: &Scope,
    ) -> Result<Map<String, Json>, ChangeError> {
        let targets = self.targets(change, scope, path, false)?;
        let mut done = Vec::new();
        for target in targets {
            let Target::Copy(id) = target else { continue };
            let s = self.copy_scope(scope, &id);
            let equipped = match &change.equipped {
                Some(f) => self.eval_bool(f, &s, &format!("{path}/equipped"))?,
                None => true,
            };
            if let Some(copy) = self.file_copy(&id) {
                copy.equipped = equipped.then_some(true);
            }
            done.push(json!({ "id": id, "equipped": equipped }));
        }
        let mut record = Map::new();
        record.insert("copies".into(), Json::Array(done));
        Ok(record)
    }

    /// `setQuantity` / `adjustQuantity`: never below 0; a copy at 0 stays; no match spends
    /// nothing and fails nothing (DA, "Spending a copy's quantity").
    pub fn quantity(
        &mut self,
        path: &str,
        change: &Change,
        scope: &Scope,
    ) -> Result<Map<String, Json>, ChangeError> {
        let adjust = change.r#type == ChangeType::AdjustQuantity;
        let targets = if let (Some(query), None) = (&change.copies, &change.entry) {
            // No match is no error, strict or not (DA).
            self.query_copies(query, change.limit.as_ref(), scope, path)?
                .into_iter()
                .map(Target::Copy)
                .collect()
        } else {
            self.targets(change, scope, path, false)?
        };
        let mut done = Vec::new();
        for target in targets {
            let Target::Copy(id) = target else { continue };
            let s = self.copy_scope(scope, &id);
            let (formula, key) = if adjust {
                (&change.by, "by")
            } else {
                (&change.value, "value")
            };
            let Some(formula) = formula else {
                return Err(ChangeError::new(
                    "schema-error",
                    format!("{path}/{key}"),
                    format!("the change needs `{key}`"),
                ));
            };
            let n = self.eval_int(formula, &s, &format!("{path}/{key}"))?;
            let Some(copy) = self.file_copy(&id) else {
                continue;
            };
            let from = copy.quantity.unwrap_or(1) as i64;
            let to = if adjust { from.saturating_add(n) } else { n }.max(0);
            copy.quantity = (to != 1).then_some(to as u64);
            done.push(json!({ "id": id, "from": from, "to": to }));
        }
        let mut record = Map::new();
        record.insert("copies".into(), Json::Array(done));
        Ok(record)
    }

    /// `setState` / `adjustState` on a copy, an applied entry, or the entries a query matches.
    pub fn state(
        &mut self,
        path: &str,
        change: &Change,
        scope: &Scope,
    ) -> Result<Map<String, Json>, ChangeError> {
        let adjust = change.r#type == ChangeType::AdjustState;
        let Some(key) = &change.key else {
            return Err(ChangeError::new(
                "schema-error",
                format!("{path}/key"),
                "the change needs `key`",
            ));
        };
        let targets = self.targets(change, scope, path, true)?;
        let mut done = Vec::new();
        for target in targets {
            let s = self.target_scope(scope, &target);
            let (formula, name) = if adjust {
                (&change.by, "by")
            } else {
                (&change.value, "value")
            };
            let Some(formula) = formula else {
                return Err(ChangeError::new(
                    "schema-error",
                    format!("{path}/{name}"),
                    format!("the change needs `{name}`"),
                ));
            };
            let value = self.eval(formula.as_str(), &s, &format!("{path}/{name}"))?;
            let written =
                self.write_state(&format!("{path}/{name}"), &target, key, value, adjust)?;
            done.push(
                json!({ "id": self.target_id(&target), "key": key, "value": written.to_json() }),
            );
        }
        let mut record = Map::new();
        record.insert("entries".into(), Json::Array(done));
        Ok(record)
    }

    /// Writes (or with `adjust` adds to) an entry's state value: a declared key (`unknown-key`),
    /// of its type, within its bounds. Returns the value written.
    pub fn write_state(
        &mut self,
        at: &str,
        target: &Target,
        key: &str,
        value: Value,
        adjust: bool,
    ) -> Result<Value, ChangeError> {
        let (content, templates) = match target {
            Target::Copy(id) => {
                let copy = self.copy_input(id).ok_or_else(|| unknown_id(at, id))?;
                self.deep(move |db| (copy.item(db).clone(), (**copy.templates(db)).clone()))
            }
            Target::Applied(i) => (self.file.applied[*i].source.0.clone(), Vec::new()),
            Target::Pick(pick) => match self.pick_content(pick) {
                Some(content) => (content, Vec::new()),
                None => {
                    return Err(ChangeError::new(
                        "unknown-key",
                        at,
                        format!("the pick declares no state `{key}` (its option is not content)"),
                    )
                    .with_data(json!({ "key": key })));
                }
            },
        };
        let decl = crate::view::state_decls(&self.ruleset, &content, &templates)
            .into_iter()
            .find(|(k, _)| *k == key)
            .map(|(_, d)| d.clone());
        let Some(decl) = decl else {
            return Err(ChangeError::new(
                "unknown-key",
                at,
                format!("`{content}` declares no state `{key}`"),
            )
            .with_data(json!({ "key": key })));
        };
        let value = super::fields::typed(Some(decl.r#type), value, at)?;
        let value = if adjust {
            let current = self.state_value(target, key);
            let current = current.unwrap_or(Value::Int(0));
            super::fields::add(&current, &value, at)?
        } else {
            value
        };
        // Bounds: an adjust is kept within them; a set out of them is soft (strict fails).
        // They may read the entry's own state (`max: self.level`): `self` is the target.
        let item_scope = {
            let mut s = self.target_scope(&Scope::in_pack(self.pack.clone()), target);
            s.item = Some((content.clone(), templates.clone()));
            s
        };
        let bound = |f: &Option<ocf_model::Formula>| -> Result<Option<Value>, ChangeError> {
            match f {
                Some(f) => self.eval(f.as_str(), &item_scope, at).map(Some),
                None => Ok(None),
            }
        };
        let (min, max) = (bound(&decl.min)?, bound(&decl.max)?);
        let clamped = super::fields::clamp(&value, min.as_ref(), max.as_ref());
        if !clamped.equals(&value) && !adjust {
            self.soft(ChangeError::new(
                "out-of-range",
                at,
                format!("{value} is outside the state's bounds; saved as {clamped}"),
            ))?;
        }
        let literal = clamped.to_json();
        match target {
            Target::Copy(id) => {
                if let Some(copy) = self.file_copy(id) {
                    copy.state.0.insert(key.to_owned(), literal);
                }
            }
            Target::Applied(i) => {
                self.file.applied[*i]
                    .state
                    .0
                    .insert(key.to_owned(), literal);
            }
            Target::Pick(pick) => {
                if let Some(entry) = self.pick_entry_mut(pick) {
                    entry.state.0.insert(key.to_owned(), literal);
                }
            }
        }
        self.sync();
        Ok(clamped)
    }

    /// A state value as `self` reads it (saved, else its default).
    fn state_value(&self, target: &Target, key: &str) -> Option<Value> {
        let selfv = match target {
            Target::Copy(id) => {
                let copy = self.copy_input(id)?;
                let c = self.input();
                self.deep(move |db| crate::db::copy_self(db, c, copy).clone())
            }
            Target::Applied(i) => crate::view::applied_self(&self.ruleset, &self.file.applied[*i]),
            Target::Pick(at) => self.pick_self(at),
        };
        match selfv {
            Value::Map(m) => m.get(key).cloned(),
            _ => None,
        }
    }

    /// `applyTemplate` / `removeTemplate` on a copy.
    pub fn template(
        &mut self,
        path: &str,
        change: &Change,
        scope: &Scope,
    ) -> Result<Map<String, Json>, ChangeError> {
        let Some(entry) = &change.entry else {
            return Err(ChangeError::new(
                "schema-error",
                format!("{path}/entry"),
                "the change needs `entry`",
            ));
        };
        let Target::Copy(id) = self.resolve_entry(entry, scope, &format!("{path}/entry"), false)?
        else {
            unreachable!("copies only")
        };
        let Some(template) = &change.template else {
            return Err(ChangeError::new(
                "schema-error",
                format!("{path}/template"),
                "the change needs `template`",
            ));
        };
        let s = self.copy_scope(scope, &id);
        let text = self.eval_string(template, &s, &format!("{path}/template"))?;
        let template = self.content_id(&text, &format!("{path}/template"))?;
        if self.ruleset.item(&template).and_then(|e| e.item.template) != Some(true) {
            return Err(ChangeError::new(
                "unknown-reference",
                format!("{path}/template"),
                format!("`{template}` is not a template"),
            )
            .with_data(json!({ "id": template })));
        }
        let apply = change.r#type == ChangeType::ApplyTemplate;
        let copy = self.file_copy(&id).expect("resolved");
        let has = copy.templates.iter().any(|t| t.as_str() == template);
        let changed = if apply && !has {
            copy.templates.push(Id::from(template.as_str()));
            true
        } else if !apply && has {
            copy.templates.retain(|t| t.as_str() != template);
            true
        } else {
            false
        };
        if !changed {
            self.soft(ChangeError::new(
                "no-match",
                format!("{path}/template"),
                if apply {
                    "the copy already has the template"
                } else {
                    "the copy has no such template"
                },
            ))?;
        }
        let mut record = Map::new();
        record.insert("id".into(), id.into());
        record.insert("template".into(), template.into());
        record.insert("changed".into(), changed.into());
        Ok(record)
    }
}
