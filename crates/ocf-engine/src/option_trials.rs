//! computeSheet's `no-eligible-option` settled by trial sheets (EC "Rules issues": a pending
//! `requiresOption` choice "has no eligible option not yet picked, as `listOptions` lists them
//! ... listOptions' trial sheet for an option reports it with the option's prerequisites").
//!
//! The judged part of the sheet ([`crate::sheet::Judged`]) is a query, which can't make a trial
//! edit. It settles what the sheet as it is can ([`crate::choices`]: an option whose pick adds no
//! effect, grant or immunity has its trial sheet's fields) and lists each choice it can't as
//! [`Unsettled`], its issue listed until a trial refutes it. Here, outside the queries, each
//! such choice's options are tried in turn until one is eligible: the character with the pick
//! made is derived from the sheet's ([`CharacterInput::with_picks`]), so the trial shares every
//! value the pick leaves as it was, as listOptions' trials reach only what the pick changes.
//! A database keeps the settled part per character for the revision it was settled in, so a sheet
//! read again makes no trial again.

use std::sync::Arc;

use ocf_model::{Literal, Namespace, PickEntry};
use rustc_hash::FxHashMap;
use serde_json::Value as Json;

use crate::choices::Unsettled;
use crate::db::{CharacterInput, activations};
use crate::sheet::{Judged, Rest};

/// What a database keeps of the settled parts: by character, the revision, the judged part as
/// the query gave it and as settled, and the sheet's rest with it.
#[derive(Default)]
pub struct Settled {
    by_character: FxHashMap<CharacterInput, Kept>,
}

struct Kept {
    revision: salsa::Revision,
    judged: (Arc<Judged>, Arc<Judged>),
    rest: Option<(Arc<Rest>, Arc<Rest>)>,
}

/// At most this many characters' settled parts are kept; past it they are forgotten at once
/// (proposed sheets are characters of their own, and a database outlives many).
const KEPT_AT_MOST: usize = 64;

/// `judged` with each [`Unsettled`] choice settled: its `no-eligible-option` left out when one
/// of its options is eligible on its trial sheet. As it is when nothing is unsettled, or when
/// `db` isn't the engine's (no trial can be derived in it).
pub(crate) fn settled_judged(
    db: &dyn salsa::Database,
    character: CharacterInput,
    judged: &Arc<Judged>,
) -> Arc<Judged> {
    if judged.unsettled.is_empty() {
        return judged.clone();
    }
    let any: &dyn std::any::Any = db;
    let Some(ours) = any.downcast_ref::<crate::Database>() else {
        return judged.clone();
    };
    let revision = salsa::plumbing::current_revision(db);
    {
        let kept = ours.settled.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(k) = kept.by_character.get(&character)
            && k.revision == revision
            && Arc::ptr_eq(&k.judged.0, judged)
        {
            return k.judged.1.clone();
        }
    }
    let refuted: Vec<&Json> = judged
        .unsettled
        .iter()
        .filter(|u| u.tries.iter().any(|o| eligible(ours, character, u, o)))
        .map(|u| &u.issue)
        .collect();
    let mut out = (**judged).clone();
    out.issues.retain(|(_, _, issue)| !refuted.contains(&issue));
    out.unsettled.clear();
    let out = Arc::new(out);
    let mut kept = ours.settled.lock().unwrap_or_else(|e| e.into_inner());
    if kept.by_character.len() >= KEPT_AT_MOST {
        kept.by_character.clear();
    }
    kept.by_character.insert(
        character,
        Kept {
            revision,
            judged: (judged.clone(), out.clone()),
            rest: None,
        },
    );
    out
}

/// The sheet's rest with its judged part settled ([`settled_judged`]); the same `Arc` while
/// nothing is unsettled, and the same settled one for a read again in the same revision.
pub(crate) fn settled_rest(
    db: &dyn salsa::Database,
    character: CharacterInput,
    rest: &Arc<Rest>,
) -> Arc<Rest> {
    if rest.judged.unsettled.is_empty() {
        return rest.clone();
    }
    let judged = settled_judged(db, character, &rest.judged);
    let any: &dyn std::any::Any = db;
    let Some(ours) = any.downcast_ref::<crate::Database>() else {
        return rest.clone();
    };
    let mut kept = ours.settled.lock().unwrap_or_else(|e| e.into_inner());
    let entry = kept.by_character.get_mut(&character);
    if let Some(k) = &entry
        && let Some((base, settled)) = &k.rest
        && Arc::ptr_eq(base, rest)
        && Arc::ptr_eq(&settled.judged, &judged)
    {
        return settled.clone();
    }
    let settled = Arc::new(Rest {
        judged,
        ..(**rest).clone()
    });
    if let Some(k) = entry {
        k.rest = Some((rest.clone(), settled.clone()));
    }
    settled
}

/// Whether `option` is eligible on the trial sheet of the character with it picked in the
/// unsettled choice `u`: the pick added to the choice's picks tree (its owner copy's, or the
/// character's own), in a character derived from `character`.
fn eligible(
    db: &crate::Database,
    character: CharacterInput,
    u: &Unsettled,
    option: &Literal,
) -> bool {
    let ruleset = character.ruleset(db).ruleset(db);
    let tree = match &u.entry {
        None => character.choices(db).clone(),
        Some(entry) => {
            let copy = character
                .features(db)
                .iter()
                .chain(character.inventory(db).iter())
                .find(|c| c.id(db) == entry);
            match copy {
                Some(copy) => copy.choices(db).clone(),
                None => return false,
            }
        }
    };
    let mut tree = (*tree).clone();
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
    let Some(picks) = crate::options::path::picks_at(&mut tree, &u.path, &qualify) else {
        return false;
    };
    picks.push(PickEntry {
        option: option.clone(),
        state: Default::default(),
        choices: Default::default(),
    });
    let Some(trial) = character.with_picks(db, u.entry.as_deref(), Arc::new(tree)) else {
        return false;
    };
    let acts = activations(db, trial);
    let Some(record) = acts
        .choices
        .iter()
        .position(|r| r.entry == u.entry && r.path == u.path)
    else {
        return false;
    };
    crate::choices::eligible_on_trial(db, trial, acts, record, option)
}
