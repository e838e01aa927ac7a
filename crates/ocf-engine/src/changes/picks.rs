//! Picking in a choice (DA, "Picking in a choice"; EC, "The choice list", Slots): `choose`,
//! `unchoose` and `finishCreation`. They see the choices computeSheet sees, slots included: a
//! path names a choice on the sheet (`unknown-choice` otherwise), a pick is checked as the sheet
//! checks it (`invalid-option` for one the sheet would report `option-not-eligible`).

use ocf_model::{Change, ChoicePathSegments, Literal, PickEntry, Picks};
use serde_json::{Map, Value as Json, json};

use super::applier::Applier;
use super::batch::ChangeError;
use super::eval::Scope;
use super::targets::Target;

/// A choice as the sheet has it.
pub(super) struct Found {
    pub(super) path: Vec<String>,
    max: Option<i64>,
    picked: usize,
    applicable: bool,
}

impl Applier<'_, '_> {
    /// The choice at `entry` + `segments` on the sheet. A rules-level choice's first segment may
    /// be its local ID.
    pub(super) fn find_choice(&self, entry: Option<&str>, segments: &[String]) -> Option<Found> {
        let c = self.input();
        let entry = entry.map(str::to_owned);
        let segments = segments.to_vec();
        self.deep(move |db| {
            let acts = crate::db::activations(db, c);
            acts.choices
                .iter()
                .find(|r| {
                    r.entry == entry
                        && r.path.len() == segments.len()
                        && r.path.iter().zip(&segments).enumerate().all(|(i, (a, b))| {
                            a == b
                                || (i == 0
                                    && entry.is_none()
                                    && a.split_once(':').is_some_and(|(_, l)| l == b))
                        })
                })
                .map(|r| Found {
                    path: r.path.clone(),
                    max: r.max,
                    picked: r.picks.len(),
                    applicable: r.applicable,
                })
        })
    }

    /// The path's entry (a copy, `unknown-id` when missing) and segments.
    pub(super) fn choice_path(
        &mut self,
        change: &Change,
        scope: &Scope,
        path: &str,
    ) -> Result<(Option<String>, Vec<String>), ChangeError> {
        let Some(p) = &change.path else {
            return Err(ChangeError::new(
                "schema-error",
                format!("{path}/path"),
                "the change needs `path`",
            ));
        };
        let entry = match &p.entry {
            Some(e) => match self.resolve_entry(e, scope, &format!("{path}/path/entry"), false)? {
                Target::Copy(id) => Some(id),
                Target::Applied(_) | Target::Pick(_) => unreachable!("copies only"),
            },
            None => None,
        };
        let segments = match &p.choice {
            ChoicePathSegments::Literal(s) => s.clone(),
            ChoicePathSegments::Formula(f) => {
                let at = format!("{path}/path/choice");
                match self.eval(f.as_str(), scope, &at)? {
                    ocf_formula::Value::List(items) => items
                        .iter()
                        .map(|v| match v {
                            ocf_formula::Value::String(s) => Ok(s.to_string()),
                            other => {
                                Err(super::applier::type_mismatch(&at, "a path segment", other))
                            }
                        })
                        .collect::<Result<_, _>>()?,
                    ocf_formula::Value::String(s) => vec![s.to_string()],
                    other => {
                        return Err(super::applier::type_mismatch(
                            &at,
                            "a list of path segments",
                            &other,
                        ));
                    }
                }
            }
        };
        Ok((entry, segments))
    }

    /// The picks list at a choice's path in the file (made when absent).
    pub(super) fn picks_at(
        &mut self,
        entry: Option<&str>,
        path: &[String],
    ) -> Option<&mut Vec<PickEntry>> {
        let tree: &mut Picks = match entry {
            Some(id) => &mut self.file_copy(id)?.choices,
            None => &mut self.file.choices,
        };
        let mut tree = tree;
        let (last, steps) = path.split_last()?;
        for pair in steps.chunks(2) {
            let [key, option] = pair else { return None };
            let list = tree.0.get_mut(key.as_str())?;
            let pick = list.iter_mut().find(|p| option_is(&p.option, option))?;
            tree = &mut pick.choices;
        }
        Some(tree.0.entry(last.clone()).or_default())
    }

    /// Adds `option` to the choice at `entry` + `segments`, checked as `choose` checks it.
    pub fn pick_into(
        &mut self,
        at: &str,
        entry: Option<&str>,
        segments: &[String],
        option: Literal,
    ) -> Result<Json, ChangeError> {
        let data = json!({ "path": crate::report::path_json(entry, segments), "option": option });
        let Some(found) = self.find_choice(entry, segments) else {
            return Err(
                ChangeError::new("unknown-choice", at, "no such choice on the character")
                    .with_data(data),
            );
        };
        if !found.applicable {
            return Err(ChangeError::new(
                "choice-not-applicable",
                at,
                "the choice does not apply now",
            )
            .with_data(data));
        }
        if found.max.is_some_and(|max| found.picked as i64 >= max) {
            return Err(
                ChangeError::new("too-many-picks", at, "the choice has all its picks")
                    .with_data(data),
            );
        }
        let Some(list) = self.picks_at(entry, &found.path) else {
            return Err(ChangeError::new(
                "unknown-choice",
                at,
                "the path's picks are not in the file",
            )
            .with_data(data));
        };
        list.push(PickEntry {
            option: option.clone(),
            state: Default::default(),
            choices: Default::default(),
        });
        self.sync();
        let wanted = crate::report::path_json(entry, &found.path);
        let sheet = self.session.sheet_json(self.id).unwrap_or_default();
        let refused = sheet["issues"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|issue| {
                issue["code"] == "option-not-eligible"
                    && issue["data"]["path"] == wanted
                    && issue["data"]["option"] == option
            });
        if refused {
            return Err(ChangeError::new(
                "invalid-option",
                at,
                "the option is not one the choice offers",
            )
            .with_data(data));
        }
        Ok(json!({ "path": wanted, "option": option }))
    }

    /// `choose`: one pick added.
    pub fn choose(
        &mut self,
        path: &str,
        change: &Change,
        scope: &Scope,
    ) -> Result<Map<String, Json>, ChangeError> {
        let (entry, segments) = self.choice_path(change, scope, path)?;
        let Some(option) = &change.option else {
            return Err(ChangeError::new(
                "schema-error",
                format!("{path}/option"),
                "a `choose` needs `option`",
            ));
        };
        let option = self
            .eval(option.as_str(), scope, &format!("{path}/option"))?
            .to_json();
        let done = self.pick_into(path, entry.as_deref(), &segments, option)?;
        let mut record = Map::new();
        record.insert("pick".into(), done);
        Ok(record)
    }

    /// `unchoose`: the pick of `option`, or without it every pick of the choice.
    pub fn unchoose(
        &mut self,
        path: &str,
        change: &Change,
        scope: &Scope,
    ) -> Result<Map<String, Json>, ChangeError> {
        let (entry, segments) = self.choice_path(change, scope, path)?;
        let data = json!({ "path": crate::report::path_json(entry.as_deref(), &segments) });
        let Some(found) = self.find_choice(entry.as_deref(), &segments) else {
            return Err(ChangeError::new(
                "unknown-choice",
                path,
                "no such choice on the character",
            )
            .with_data(data));
        };
        let option = match &change.option {
            Some(o) => Some(
                self.eval(o.as_str(), scope, &format!("{path}/option"))?
                    .to_json(),
            ),
            None => None,
        };
        let removed = match self.picks_at(entry.as_deref(), &found.path) {
            None => 0,
            Some(list) => match &option {
                None => {
                    let n = list.len();
                    list.clear();
                    n
                }
                Some(o) => match list.iter().position(|p| &p.option == o) {
                    Some(i) => {
                        list.remove(i);
                        1
                    }
                    None => 0,
                },
            },
        };
        // An emptied list is not saved.
        self.prune_empty(entry.as_deref(), &found.path);
        if removed == 0 {
            self.soft(
                ChangeError::new("no-match", path, "the choice has no such pick").with_data(data),
            )?;
        }
        let mut record = Map::new();
        record.insert("removed".into(), removed.into());
        Ok(record)
    }

    fn prune_empty(&mut self, entry: Option<&str>, path: &[String]) {
        if path.len() == 1 {
            let tree = match entry {
                Some(id) => match self.file_copy(id) {
                    Some(c) => &mut c.choices,
                    None => return,
                },
                None => &mut self.file.choices,
            };
            if tree.get(&path[0]).is_some_and(|l| l.is_empty()) {
                tree.0.shift_remove(&path[0]);
            }
        }
    }

    /// `finishCreation`: ends creation (`creating` goes) while no issue remains; else fails with
    /// the first problem: each pending choice as `too-few-picks` in pending order, then the
    /// sheet's issues in their order (data: every problem).
    pub fn finish_creation(&mut self, path: &str) -> Result<Map<String, Json>, ChangeError> {
        let sheet = self.session.sheet_json(self.id).unwrap_or_default();
        let mut problems: Vec<Json> = sheet["pending"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|p| json!({ "code": "too-few-picks", "data": p }))
            .collect();
        problems.extend(sheet["issues"].as_array().into_iter().flatten().cloned());
        if let Some(first) = problems.first() {
            let code = first["code"].as_str().unwrap_or("too-few-picks").to_owned();
            return Err(ChangeError::new(
                &code,
                path,
                "creation cannot finish while issues remain",
            )
            .with_data(json!({ "issues": problems })));
        }
        self.file.creating = None;
        Ok(Map::new())
    }
}

pub(super) fn option_is(option: &Literal, segment: &str) -> bool {
    match option {
        Literal::String(s) => s == segment,
        other => serde_json::from_str::<Literal>(segment).is_ok_and(|v| v == *other),
    }
}
