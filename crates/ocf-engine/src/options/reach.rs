//! Which fields a trial's pick can change ([`crate::reads`]): the fields whose effect instances
//! the pick changes, the fields that read a view of the character the pick changes (a copy's
//! `self`, `character`, `links`) or something else that can change (an item, the list of copies),
//! and every field that reads one of those, directly or through others. A field outside that set
//! read, on the base sheet, only fields whose values the pick leaves as they are, views equal to
//! the base's, its own saved value and effects (both unchanged) and the ruleset, so its trial
//! value is its base value: a trial re-reads only the set, and its cost follows the pick, not the
//! sheet.

use std::sync::Arc;

use ocf_formula::Value;
use rustc_hash::FxHashMap;

use crate::db::{CharacterInput, Links};
use crate::reads::View;
use crate::sheet::Sheet;

/// A view's value, compared before and after a pick.
#[derive(PartialEq)]
enum Seen {
    Value(Value),
    Links(Links),
}

fn seen(db: &dyn salsa::Database, c: CharacterInput, view: View) -> Seen {
    match view {
        View::Copy(copy) => Seen::Value(crate::db::copy_self(db, c, copy).clone()),
        View::Character => Seen::Value(crate::db::character_view(db, c).clone()),
        View::Links => Seen::Links(crate::db::links(db, c).clone()),
    }
}

/// Whether `view` is now as it was `before`: compared where the view is, without a copy of it.
fn still(db: &dyn salsa::Database, c: CharacterInput, view: View, before: &Seen) -> bool {
    match (view, before) {
        (View::Copy(copy), Seen::Value(v)) => crate::db::copy_self(db, c, copy) == v,
        (View::Character, Seen::Value(v)) => crate::db::character_view(db, c) == v,
        (View::Links, Seen::Links(l)) => crate::db::links(db, c) == l,
        _ => false,
    }
}

/// The base sheet's reads, reversed, with the views it read as they were.
pub(crate) struct Reach {
    index: FxHashMap<Arc<str>, usize>,
    /// For each field (by its place on the sheet), the fields that read it directly.
    read_by: Vec<Vec<usize>>,
    /// Each view read, its value on the base, and the fields that read it.
    views: Vec<(View, Seen, Vec<usize>)>,
    /// The fields that read something other than fields and views.
    other: Vec<usize>,
}

impl Reach {
    /// The reach of `base`, the sheet of `c` in `db` as it is now (before any trial's pick).
    pub(crate) fn of(db: &dyn salsa::Database, c: CharacterInput, base: &Sheet) -> Reach {
        let index: FxHashMap<Arc<str>, usize> = base
            .fields
            .iter()
            .enumerate()
            .map(|(i, (id, _))| (id.clone(), i))
            .collect();
        let mut read_by = vec![Vec::new(); base.fields.len()];
        let mut by_view: FxHashMap<View, Vec<usize>> = FxHashMap::default();
        let mut other = Vec::new();
        for (i, (_, value)) in base.fields.iter().enumerate() {
            if value.reads.other {
                other.push(i);
            }
            for read in value.reads.fields.iter() {
                if let Some(&j) = index.get(read) {
                    read_by[j].push(i);
                }
            }
            for view in value.reads.views.iter() {
                by_view.entry(*view).or_default().push(i);
            }
        }
        let views = by_view
            .into_iter()
            .map(|(view, readers)| (view, seen(db, c, view), readers))
            .collect();
        Reach {
            index,
            read_by,
            views,
            other,
        }
    }

    /// The places, in sheet order, of the fields a pick can reach that changes the instances of
    /// `changed` and leaves `c` in `db` as it is now.
    pub(crate) fn from(
        &self,
        db: &dyn salsa::Database,
        c: CharacterInput,
        changed: &[String],
    ) -> Vec<usize> {
        let mut reached = vec![false; self.read_by.len()];
        let mut stack: Vec<usize> = changed
            .iter()
            .filter_map(|f| self.index.get(f.as_str()).copied())
            .chain(self.other.iter().copied())
            .collect();
        for (view, before, readers) in &self.views {
            if !still(db, c, *view, before) {
                stack.extend(readers.iter().copied());
            }
        }
        while let Some(i) = stack.pop() {
            if std::mem::replace(&mut reached[i], true) {
                continue;
            }
            stack.extend(self.read_by[i].iter().copied().filter(|&j| !reached[j]));
        }
        (0..reached.len()).filter(|&i| reached[i]).collect()
    }
}
