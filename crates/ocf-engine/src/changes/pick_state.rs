//! State on picks (DA, "The action's own pick"): a `setState` / `adjustState` with `pick: self`
//! names the pick that activated the running content, and the change that reaches the character
//! "carries its path and option"; `picks: { where, limit? }` names picks by query, "passed on as
//! applied is", so the receiver resolves it. Where a pick's state lives is lost with
//! characters.md: it is saved on the pick, `{ option, state, choices }` (decisions.md, issue 12),
//! its keys those the picked content (its type, its item) declares.

use ocf_formula::Value;
use ocf_model::{Change, EntryQuery, Literal, PickEntry, Picks};
use serde_json::json;

use super::applier::Applier;
use super::batch::ChangeError;
use super::eval::{OwnedSelf, Scope};
use super::targets::PickAt;
use super::targets::Target;

impl Applier<'_, '_> {
    /// The picks a state change names: `pick: self` with the `path` and `option` the action
    /// wrote in, or `picks: { where, limit? }` over every pick of the character.
    pub fn pick_targets(
        &mut self,
        change: &Change,
        scope: &Scope,
        path: &str,
    ) -> Result<Vec<Target>, ChangeError> {
        if let Some(query) = &change.picks {
            return Ok(self
                .query_picks(query, scope, path)?
                .into_iter()
                .map(Target::Pick)
                .collect());
        }
        if change.pick.as_deref() != Some("self") {
            return Err(ChangeError::new(
                "schema-error",
                format!("{path}/pick"),
                "`pick` is `self`",
            ));
        }
        let (Some(_), Some(option)) = (&change.path, &change.option) else {
            return Err(ChangeError::new(
                "schema-error",
                format!("{path}/pick"),
                "`pick: self` is the running action's pick: the change that reaches the \
                 character carries its `path` and `option`",
            ));
        };
        let (entry, segments) = self.choice_path(change, scope, path)?;
        let option = self
            .eval(option.as_str(), scope, &format!("{path}/option"))?
            .to_json();
        let data = json!({
            "path": crate::report::path_json(entry.as_deref(), &segments),
            "option": option,
        });
        let Some(found) = self.find_choice(entry.as_deref(), &segments) else {
            return Err(ChangeError::new(
                "unknown-choice",
                format!("{path}/path"),
                "no such choice on the character",
            )
            .with_data(data));
        };
        let at = PickAt {
            entry,
            path: found.path,
            option,
        };
        if self.pick_entry(&at).is_none() {
            return Err(ChangeError::new(
                "unknown-id",
                format!("{path}/option"),
                "the choice has no such pick",
            )
            .with_data(data));
        }
        Ok(vec![Target::Pick(at)])
    }

    /// Every pick of the character in instance order (the rules-level choices, then `features`
    /// and `inventory` in file order, each tree depth first) whose `where` holds, at most `limit`:
    /// `self` the pick (`option`, `path`, its state keys with their defaults), `item` the picked
    /// content when the option is content.
    fn query_picks(
        &mut self,
        query: &EntryQuery,
        scope: &Scope,
        path: &str,
    ) -> Result<Vec<PickAt>, ChangeError> {
        let limit = match &query.limit {
            Some(f) => {
                let n = self.eval_int(f, scope, &format!("{path}/picks/limit"))?;
                if n < 0 {
                    return Err(super::applier::type_mismatch(
                        &format!("{path}/picks/limit"),
                        "a limit of 0 or more",
                        &Value::Int(n),
                    ));
                }
                Some(n as usize)
            }
            None => None,
        };
        let mut all = Vec::new();
        walk(None, &self.file.choices, &mut Vec::new(), &mut all);
        for copy in self.file.features.iter().chain(self.file.inventory.iter()) {
            walk(Some(&copy.id), &copy.choices, &mut Vec::new(), &mut all);
        }
        let mut out = Vec::new();
        for at in all {
            if limit.is_some_and(|l| out.len() >= l) {
                break;
            }
            let s = self.pick_scope(scope, &at);
            if self.eval_bool(&query.r#where, &s, &format!("{path}/picks/where"))? {
                out.push(at);
            }
        }
        if out.is_empty() {
            self.soft(ChangeError::new(
                "no-match",
                format!("{path}/picks"),
                "the query matches nothing; nothing changed",
            ))?;
        }
        Ok(out)
    }

    /// The picked content, when the option is content.
    pub fn pick_content(&self, at: &PickAt) -> Option<String> {
        let Literal::String(id) = &at.option else {
            return None;
        };
        self.ruleset.item(id).map(|_| id.clone())
    }

    /// `scope` with `self` the pick and `item` its content.
    pub fn pick_scope(&self, base: &Scope, at: &PickAt) -> Scope {
        let mut scope = base.clone();
        scope.self_ref = OwnedSelf::Value(self.pick_self(at));
        scope.item = self.pick_content(at).map(|c| (c, Vec::new()));
        scope
    }

    /// A pick as `self`: `option`, `path` and its state keys, declared ones by their type with
    /// their `default` when unsaved (as an applied entry's).
    pub fn pick_self(&self, at: &PickAt) -> Value {
        let state = self
            .pick_entry(at)
            .map(|p| p.state.clone())
            .unwrap_or_default();
        let decls = self
            .pick_content(at)
            .map(|c| crate::view::state_decls(&self.ruleset, &c, &[]))
            .unwrap_or_default();
        let mut members = vec![
            (
                "option".to_owned(),
                Value::from_json(&at.option).unwrap_or(Value::Null),
            ),
            (
                "path".to_owned(),
                Value::from_json(&crate::report::path_json(at.entry.as_deref(), &at.path))
                    .unwrap_or(Value::Null),
            ),
        ];
        members.extend(crate::view::state_values(
            &decls,
            &state,
            &ocf_formula::MapContext::new(),
        ));
        Value::map(members)
    }

    /// The pick in the file, if it is there.
    pub fn pick_entry(&self, at: &PickAt) -> Option<&PickEntry> {
        let tree = match &at.entry {
            Some(id) => {
                &self
                    .file
                    .inventory
                    .iter()
                    .chain(self.file.features.iter())
                    .find(|c| &c.id == id)?
                    .choices
            }
            None => &self.file.choices,
        };
        let (last, steps) = at.path.split_last()?;
        let mut tree = tree;
        for pair in steps.chunks(2) {
            let [key, option] = pair else { return None };
            tree = &tree
                .get(key)?
                .iter()
                .find(|p| super::picks::option_is(&p.option, option))?
                .choices;
        }
        tree.get(last)?.iter().find(|p| p.option == at.option)
    }

    /// The pick in the file, to change; a standard copy's tree is written into the file first.
    pub fn pick_entry_mut(&mut self, at: &PickAt) -> Option<&mut PickEntry> {
        let option = at.option.clone();
        let list = self.picks_at(at.entry.as_deref(), &at.path)?;
        list.iter_mut().find(|p| p.option == option)
    }
}

/// Every pick of `tree`, depth first, with its choice path.
fn walk(entry: Option<&str>, tree: &Picks, prefix: &mut Vec<String>, out: &mut Vec<PickAt>) {
    for (key, picks) in tree.iter() {
        prefix.push(key.to_owned());
        for pick in picks {
            out.push(PickAt {
                entry: entry.map(str::to_owned),
                path: prefix.clone(),
                option: pick.option.clone(),
            });
            prefix.push(segment(&pick.option));
            walk(entry, &pick.choices, prefix, out);
            prefix.pop();
        }
        prefix.pop();
    }
}

/// A picked option as a path segment: a string as it is, another value as JSON text.
fn segment(option: &Literal) -> String {
    match option {
        Literal::String(s) => s.clone(),
        other => serde_json::to_string(other).unwrap_or_default(),
    }
}
