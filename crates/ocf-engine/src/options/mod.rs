//! listOptions (docs/spec/engine-interface.md, "listOptions"): a choice's options, each with
//! whether it is eligible and why not, whether it is picked, and what picking it would change.
//!
//! Each option not yet picked gets a **trial sheet**: the sheet of the character with the pick
//! made, read from the session's database with the pick set as an edit of its inputs, and
//! everything put back when every option has been tried. [`trial`] makes those edits reach only
//! what depends on the pick, so a trial costs the pick's dependents, not a whole sheet. EC:
//! "listOptions' trial sheet for an option reports it with the option's prerequisites": an
//! option is eligible when its trial sheet raises no issue against the pick. A choice of an
//! applied entry, which keeps no picks, gets no trials: its options carry the sheet's own checks.
//!
//! [`path`] resolves the choice path and checks a pick's option, for applyChanges' `choose` and
//! `unchoose` to share.

pub mod path;
pub(crate) mod reach;
pub(crate) mod trial;

use std::sync::Arc;

use ocf_model::{Character, ChoiceOptions, ChoiceSource, CopyEntry, Literal, Namespace, PickEntry};
use serde_json::{Map, Value as Json, json};

use crate::input::CopyList;
use crate::session::{CharacterId, EditError, Session};
use crate::sheet::{Sheet, Trial};
use path::{ChoicePath, PathError, segment_text};
use trial::Trials;

/// listOptions' output.
#[derive(Debug, Clone, PartialEq)]
pub struct Listed {
    pub path: ChoicePath,
    pub min: i64,
    pub max: Option<i64>,
    /// The choice's picks, as the sheet lists them.
    pub picks: Vec<Literal>,
    pub options: Vec<ListedOption>,
    /// The choice's own recommendation (its `recommend`), when it names an option listed eligible
    /// and not picked: a recommendation the player can't take recommends nothing.
    pub recommended: Option<Literal>,
}

/// One option of the choice.
#[derive(Debug, Clone, PartialEq)]
pub struct ListedOption {
    /// As a pick names it: a qualified content ID, an inline option's ID, a value.
    pub option: Literal,
    /// `content`, `inline` or `value` (a listed value or a formula's).
    pub kind: &'static str,
    /// The text key of its name: `<content ID>.name`, or for an inline option
    /// `<owner root>.choices.<choice>.options.<option>.name`; none for a value.
    pub name: Option<String>,
    pub eligible: bool,
    /// The issues its trial sheet raises against the pick, as computeSheet reports them.
    pub reasons: Vec<Json>,
    pub picked: bool,
    /// What the pick would change (empty for a picked option: its sheet is the sheet).
    pub changes: Changes,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Changes {
    /// `(field, before, after)`: each field whose value differs on the trial sheet, in field
    /// order, as `{ value }` or `{ error }`.
    pub values: Vec<(String, Json, Json)>,
    /// The choices the pick would open: applicable on the trial sheet, not on this one, as
    /// computeSheet's `choices` lists them.
    pub opens: Vec<Json>,
    /// Other issues the trial sheet raises that this sheet doesn't (a constraint the pick breaks).
    pub issues: Vec<Json>,
}

/// Why listOptions failed.
#[derive(Debug, Clone, PartialEq)]
pub enum OptionsError {
    Edit(EditError),
    Path(PathError),
}

impl OptionsError {
    pub fn to_json(&self) -> Json {
        match self {
            OptionsError::Path(e) => e.to_json(),
            OptionsError::Edit(e) => {
                json!({ "code": "unknown-character", "message": e.to_string() })
            }
        }
    }
}

impl std::fmt::Display for OptionsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OptionsError::Edit(e) => e.fmt(f),
            OptionsError::Path(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for OptionsError {}

impl From<EditError> for OptionsError {
    fn from(e: EditError) -> Self {
        OptionsError::Edit(e)
    }
}

impl From<PathError> for OptionsError {
    fn from(e: PathError) -> Self {
        OptionsError::Path(e)
    }
}

impl Session {
    /// listOptions for the choice at `path` of an open character ([`list_options`]).
    pub fn list_options(
        &mut self,
        id: CharacterId,
        path: &ChoicePath,
    ) -> Result<Listed, OptionsError> {
        list_options(self, id, path)
    }
}

/// listOptions on an open character. The held file is the same before and after; in between,
/// its `competing` picks are left out (EC, "Stacking": listOptions uses the recommended option of
/// every group) and each trial pick is made in turn.
#[tracing::instrument(name = "listOptions", level = "info", skip_all, fields(character = ?id, path = ?path.choice))]
pub fn list_options(
    session: &mut Session,
    id: CharacterId,
    path: &ChoicePath,
) -> Result<Listed, OptionsError> {
    let held = session.file(id)?.clone();
    let mut base_file = held.clone();
    base_file.competing.clear();
    let result = trials(session, id, path, &base_file);
    if session.file(id)? != &held {
        session.update(id, &held)?;
    }
    result
}

fn trials(
    session: &mut Session,
    id: CharacterId,
    path: &ChoicePath,
    base_file: &Character,
) -> Result<Listed, OptionsError> {
    if session.file(id)? != base_file {
        session.update(id, base_file)?;
    }
    let base = session.sheet(id)?;
    let acts = base.activations.clone();
    let index = path::resolve_listed(&acts, path)?;
    let record = acts.choices[index].clone();
    let input = session
        .character_input(id)
        .ok_or(EditError::UnknownCharacter)?;
    let ruleset = session.db_ruleset(id)?;
    // The options in the choice's order, then any pick they don't hold (hidden content, a value
    // no longer listed), so a picked option is always listed.
    let (mut options, picks, recommended) = {
        let acts = acts.clone();
        session.deep(id, move |db| {
            let options = crate::choices::options_of(db, input, &acts, index);
            let picks: Vec<Literal> = acts.choices[index]
                .picks
                .iter()
                .map(|p| crate::choices::option_of(db, input, &acts, index, p).unwrap_or(p.clone()))
                .collect();
            let recommended = crate::choices::recommended_of(db, input, &acts, index);
            (options, picks, recommended)
        })?
    };
    for p in &picks {
        if !options.contains(p) {
            options.push(p.clone());
        }
    }
    if path::of_applied(&acts, index) {
        let options = untried(session, id, input, &acts, index, &record, options)?;
        return Ok(Listed {
            path: path.clone(),
            min: record.min,
            max: record.max,
            picks,
            recommended: takeable(recommended, &options),
            options,
        });
    }
    let base_issues = issues(&base);
    let choice_path = path.to_json();
    let mut direct = Trials::begin(session, id, path.entry.as_deref());
    let listed = list(
        session,
        id,
        path,
        base_file,
        (&base, &base_issues),
        (&record, &*ruleset),
        (options, &picks),
        &choice_path,
        &mut direct,
    );
    if let Some(trials) = direct {
        trials.end(session);
        // Every input is as it was: the base is the sheet again.
        session.keep_sheet(id, base);
    }
    let options = listed?;
    Ok(Listed {
        path: path.clone(),
        min: record.min,
        max: record.max,
        picks,
        recommended: takeable(recommended, &options),
        options,
    })
}

/// `recommended` when it is an option listed eligible and not picked.
fn takeable(recommended: Option<Literal>, options: &[ListedOption]) -> Option<Literal> {
    recommended.filter(|r| {
        options
            .iter()
            .any(|o| o.option == *r && o.eligible && !o.picked)
    })
}

/// The options of a choice of an applied entry, which keeps no picks, so no trial sheet can be
/// made: each with the reasons the sheet's checks give ([`crate::choices::untried_reasons`]), and
/// no changes (decisions.md, "listOptions").
#[allow(clippy::too_many_arguments)]
fn untried(
    session: &Session,
    id: CharacterId,
    input: crate::db::CharacterInput,
    acts: &Arc<crate::db::Activations>,
    index: usize,
    record: &crate::db::ChoiceRecord,
    options: Vec<Literal>,
) -> Result<Vec<ListedOption>, EditError> {
    let acts = acts.clone();
    let reasons: Vec<Vec<Json>> = {
        let options = options.clone();
        session.deep(id, move |db| {
            options
                .iter()
                .map(|o| crate::choices::untried_reasons(db, input, &acts, index, o))
                .collect()
        })?
    };
    Ok(options
        .into_iter()
        .zip(reasons)
        .map(|(option, reasons)| {
            let (kind, name) = kind_and_name(record, &option);
            ListedOption {
                eligible: reasons.is_empty(),
                option,
                kind,
                name,
                reasons,
                picked: false,
                changes: Changes::default(),
            }
        })
        .collect())
}

/// An option's `kind` and the text key of its name.
fn kind_and_name(
    record: &crate::db::ChoiceRecord,
    option: &Literal,
) -> (&'static str, Option<String>) {
    let kind = match &record.decl.options {
        ChoiceOptions::Inline(_) => "inline",
        ChoiceOptions::Source(ChoiceSource::Content { .. }) => "content",
        ChoiceOptions::Source(_) => "value",
    };
    let name = match kind {
        "inline" => Some(format!(
            "{}.choices.{}.options.{}.name",
            record.root,
            record.decl.id,
            segment_text(option)
        )),
        "content" => Some(format!("{}.name", segment_text(option))),
        _ => None,
    };
    (kind, name)
}

/// Each option with its trial: the pick made through `direct` when it is given (the trials that
/// reach only what the pick changes), else as an edit of the held file.
#[allow(clippy::too_many_arguments)]
fn list(
    session: &mut Session,
    id: CharacterId,
    path: &ChoicePath,
    base_file: &Character,
    (base, base_issues): (&Sheet, &[Json]),
    (record, ruleset): (&crate::db::ChoiceRecord, &ocf_model::Ruleset),
    (options, picks): (Vec<Literal>, &[Literal]),
    choice_path: &Json,
    direct: &mut Option<Trials>,
) -> Result<Vec<ListedOption>, OptionsError> {
    let mut listed = Vec::with_capacity(options.len());
    // The base sheet's reads reversed, with the views it read as they are before any pick.
    let reach = match direct {
        Some(_) => {
            let c = session
                .character_input(id)
                .ok_or(EditError::UnknownCharacter)?;
            let base = base.clone();
            Some(Arc::new(
                session.deep(id, move |db| reach::Reach::of(db, c, &base))?,
            ))
        }
        None => None,
    };
    for option in options {
        let picked = picks.contains(&option);
        let (kind, name) = kind_and_name(record, &option);
        let about = About {
            choice: choice_path,
            pick: path::ChoicePath {
                entry: path.entry.clone(),
                choice: path
                    .choice
                    .iter()
                    .cloned()
                    .chain([segment_text(&option)])
                    .collect(),
            }
            .to_json(),
            option: &option,
            content: (kind == "content").then(|| segment_text(&option)),
        };
        let (reasons, changes) = if picked {
            let reasons = base_issues.iter().filter(|i| about.concerns(i)).cloned();
            (reasons.collect(), Changes::default())
        } else {
            let mut changed = None;
            match direct.as_mut() {
                Some(trials) => {
                    let mut tree = trials.original().clone();
                    add_pick(&mut tree, path, record, &option, ruleset)?;
                    changed = trials.pick(session, tree);
                }
                None => {
                    let file = trial_file(session, id, base_file, path, record, &option, ruleset)?;
                    session.update(id, &file)?;
                }
            }
            let trial = match (changed, &reach) {
                (Some(changed), Some(reach)) => {
                    let trial = reached_sheet(session, id, base, reach.clone(), changed)?;
                    // Every debug build (the tests, the conformance cases) checks the reach
                    // against the whole sheet read again.
                    if cfg!(debug_assertions) {
                        let whole = session.sheet(id)?;
                        let same = trial.fields.iter().zip(whole.fields.iter());
                        for ((field, reached), (_, read)) in same {
                            debug_assert_eq!(reached, read, "the reach of a trial missed {field}");
                        }
                    }
                    trial
                }
                _ => Trial::from(&session.sheet(id)?),
            };
            diff(base, base_issues, &trial, &about)
        };
        listed.push(ListedOption {
            eligible: reasons.is_empty(),
            option,
            kind,
            name,
            reasons,
            picked,
            changes,
        });
    }
    Ok(listed)
}

/// The trial of a pick that changed the instances of `changed`: the base sheet's fields with
/// those the pick can reach read again ([`reach`]), or the whole sheet read again where the base
/// isn't this character's.
fn reached_sheet(
    session: &Session,
    id: CharacterId,
    base: &Sheet,
    reach: Arc<reach::Reach>,
    changed: Vec<String>,
) -> Result<Trial, EditError> {
    let c = session
        .character_input(id)
        .ok_or(EditError::UnknownCharacter)?;
    let fields = base.fields.clone();
    let sheet = session.deep(id, move |db| {
        let reread = reach.from(db, c, &changed);
        crate::sheet::with_fields(db, c, &fields, &reread)
    })?;
    match sheet {
        Some(trial) => Ok(trial),
        None => Ok(Trial::from(&session.sheet(id)?)),
    }
}

impl Session {
    /// The ruleset an open character computes on (its homebrew's, or the session's).
    fn db_ruleset(&self, id: CharacterId) -> Result<Arc<ocf_model::Ruleset>, EditError> {
        let db = self.db(id)?;
        let input = self
            .character_input(id)
            .ok_or(EditError::UnknownCharacter)?;
        Ok(input.ruleset(db).ruleset(db).clone())
    }
}

/// What an issue must name to be raised against the pick.
struct About<'a> {
    choice: &'a Json,
    pick: Json,
    option: &'a Literal,
    content: Option<String>,
}

impl About<'_> {
    /// Whether `issue` is raised against the pick: the pick fails the choice (`option-not-eligible`),
    /// repeats its `unique` group (`already-picked`), its prerequisites or the picked content's
    /// fail (`prerequisite-not-met`), the content is hidden (`content-hidden`), or a copy limit is
    /// exceeded (`too-many-copies`, which only the pick can have caused on a trial sheet).
    fn concerns(&self, issue: &Json) -> bool {
        let data = &issue["data"];
        let option = serde_json::to_value(self.option).unwrap_or_default();
        match issue["code"].as_str().unwrap_or_default() {
            "option-not-eligible" | "already-picked" => {
                data["path"] == *self.choice && data["option"] == option
            }
            "prerequisite-not-met" => {
                data["path"] == self.pick
                    || self.content.as_deref().is_some_and(|c| {
                        issue["source"]["id"] == c
                            && issue["id"]
                                .as_str()
                                .is_some_and(|id| id.starts_with(&format!("{c}/")))
                    })
            }
            "content-hidden" => self.content.as_deref().is_some_and(|c| data["item"] == c),
            "too-many-copies" => true,
            _ => false,
        }
    }
}

/// The issues of a sheet, as computeSheet lists them.
fn issues(sheet: &Sheet) -> Vec<Json> {
    sheet.issues_json()
}

/// The trial sheet against the base: the reasons (new issues against the pick) and the changes.
fn diff(base: &Sheet, base_issues: &[Json], trial: &Trial, about: &About) -> (Vec<Json>, Changes) {
    let mut changes = Changes::default();
    for ((id, before), (_, after)) in base.fields.iter().zip(trial.fields.iter()) {
        if Arc::ptr_eq(before, after) {
            continue;
        }
        let (b, a) = (shown(before), shown(after));
        if b != a {
            changes.values.push((id.to_string(), b, a));
        }
    }
    let opened: Vec<&Json> = base.choices().iter().map(|c| &c["path"]).collect();
    changes.opens = trial
        .judged
        .choices
        .iter()
        .filter(|c| !opened.contains(&&c["path"]))
        .cloned()
        .collect();
    let mut reasons = Vec::new();
    for issue in trial.issues_json() {
        if base_issues.contains(&issue) {
            continue;
        }
        if about.concerns(&issue) {
            reasons.push(issue);
        } else {
            changes.issues.push(issue);
        }
    }
    (reasons, changes)
}

/// A field's value as listOptions shows it: `{ value }`, or `{ error }`.
fn shown(field: &crate::db::FieldValue) -> Json {
    match (&field.value, &field.error) {
        (_, Some(error)) => json!({ "error": error.code.as_str() }),
        (Some(value), None) => json!({ "value": value.to_json() }),
        (None, None) => json!({}),
    }
}

/// The file with `option` picked in the choice: added to its picks, or, when the choice is full,
/// in place of its last pick (decisions.md, "listOptions": a full choice's trial replaces).
fn trial_file(
    session: &Session,
    id: CharacterId,
    base: &Character,
    path: &ChoicePath,
    record: &crate::db::ChoiceRecord,
    option: &Literal,
    ruleset: &ocf_model::Ruleset,
) -> Result<Character, OptionsError> {
    let mut file = base.clone();
    let tree = match &path.entry {
        None => &mut file.choices,
        Some(entry) => {
            let in_file = file
                .features
                .iter()
                .chain(&file.inventory)
                .any(|e| &e.id == entry);
            if !in_file {
                // An unsaved standard copy: its entry is saved for the trial, as an edit of it
                // would save it, and goes with the file when it is put back.
                let (list, item) =
                    standard_copy(session, id, entry).ok_or_else(|| path::PathError {
                        code: "unknown-id",
                        message: format!("the character has no copy `{entry}`"),
                        data: json!({ "entry": entry }),
                    })?;
                let copy = CopyEntry::new(entry.clone(), item.as_str());
                match list {
                    CopyList::Features => file.features.push(copy),
                    CopyList::Inventory => file.inventory.push(copy),
                }
            }
            let copy = file
                .features
                .iter_mut()
                .chain(file.inventory.iter_mut())
                .find(|e| &e.id == entry)
                .expect("the copy is in the file");
            &mut copy.choices
        }
    };
    add_pick(tree, path, record, option, ruleset)?;
    Ok(file)
}

/// `option` picked in the choice at `path` of the picks tree `tree` (the character's or the
/// owner copy's): added to its picks, or, when the choice is full, in place of its last pick
/// (decisions.md, "listOptions": a full choice's trial replaces).
fn add_pick(
    tree: &mut ocf_model::Picks,
    path: &ChoicePath,
    record: &crate::db::ChoiceRecord,
    option: &Literal,
    ruleset: &ocf_model::Ruleset,
) -> Result<(), OptionsError> {
    let qualify = |o: &Literal| {
        let text = o.as_str()?;
        if ruleset.item(text).is_some() {
            return Some(text.to_owned());
        }
        ruleset
            .packs
            .iter()
            .find_map(|p| ruleset.resolve(&p.id, text, Namespace::Content))
    };
    let picks = path::picks_at(tree, &path.choice, &qualify).ok_or_else(|| PathError {
        code: "unknown-choice",
        message: "a picked option on the path isn't in the character's picks".into(),
        data: json!({ "path": path.to_json() }),
    })?;
    let pick = PickEntry {
        option: option.clone(),
        state: Default::default(),
        choices: Default::default(),
    };
    let full = record
        .max
        .is_some_and(|m| m >= 1 && picks.len() as i64 >= m);
    if full {
        picks.pop();
    }
    picks.push(pick);
    Ok(())
}

/// An unsaved standard copy's list and item.
fn standard_copy(session: &Session, id: CharacterId, entry: &str) -> Option<(CopyList, String)> {
    let db = session.db(id).ok()?;
    let c = session.character_input(id)?;
    c.features(db)
        .iter()
        .chain(c.inventory(db).iter())
        .find(|x| x.id(db) == entry)
        .map(|x| (x.list(db), x.item(db).clone()))
}

impl Listed {
    /// listOptions' output as JSON (docs/spec/engine-interface.md, "listOptions").
    pub fn to_json(&self) -> Json {
        let mut out = Map::new();
        out.insert("path".into(), self.path.to_json());
        out.insert("min".into(), self.min.into());
        if let Some(max) = self.max {
            out.insert("max".into(), max.into());
        }
        out.insert(
            "picks".into(),
            serde_json::to_value(&self.picks).unwrap_or_default(),
        );
        out.insert(
            "options".into(),
            self.options.iter().map(ListedOption::to_json).collect(),
        );
        if let Some(r) = &self.recommended {
            out.insert("recommended".into(), r.clone());
        }
        Json::Object(out)
    }
}

impl ListedOption {
    pub fn to_json(&self) -> Json {
        let mut o = Map::new();
        o.insert(
            "option".into(),
            serde_json::to_value(&self.option).unwrap_or_default(),
        );
        o.insert("kind".into(), self.kind.into());
        if let Some(name) = &self.name {
            o.insert("name".into(), name.clone().into());
        }
        o.insert("eligible".into(), self.eligible.into());
        o.insert("reasons".into(), self.reasons.clone().into());
        o.insert("picked".into(), self.picked.into());
        let values: Vec<Json> = self
            .changes
            .values
            .iter()
            .map(|(field, before, after)| json!({ "field": field, "before": before, "after": after }))
            .collect();
        o.insert(
            "changes".into(),
            json!({
                "values": values,
                "opens": self.changes.opens,
                "issues": self.changes.issues,
            }),
        );
        Json::Object(o)
    }
}
