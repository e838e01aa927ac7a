//! What a field's value read: the other fields, by qualified ID, the views of the character it
//! read (a copy's `self`, the character's view, the links), and whether it read anything else
//! that can change (an item in the character, the list of copies). listOptions' trials
//! ([`crate::options`]) use it to re-read only the fields a pick can reach: those whose effects
//! the pick changes, those that read a view the pick changes or something else, and those that
//! read them.
//!
//! Salsa records the same dependencies but doesn't expose them; the field's computation records
//! its own, on a per-thread stack (a field computed while another is computing has its own entry).

use std::cell::RefCell;
use std::sync::Arc;

use smallvec::SmallVec;

/// A field's reads. Not part of the field's value: two values that differ only in what they read
/// are equal, so that salsa's backdating is unchanged.
#[derive(Debug, Clone, Default)]
pub struct FieldReads {
    /// The fields read, each once, in the order first read, as recorded: most values read one or
    /// two, kept inline (a list each was a tenth of a cold sheet's allocations).
    pub fields: Reads,
    /// The views read, each once.
    pub views: Vec<View>,
    /// Whether the value read something other than fields, views, its own saved value, its own
    /// effects and the ruleset: then it can change with nothing recorded here changing.
    pub other: bool,
}

/// A view of the character a formula reads as a whole, which a trial compares before and after
/// its pick.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum View {
    /// A copy's `self`.
    Copy(crate::db::CopyInput),
    /// `character`.
    Character,
    /// `links`.
    Links,
}

impl PartialEq for FieldReads {
    fn eq(&self, _: &FieldReads) -> bool {
        true
    }
}

impl FieldReads {
    /// The reads of a value computed without recording them (a loop's, one past the depth
    /// limit): anything may have changed it.
    pub fn unknown() -> FieldReads {
        FieldReads {
            fields: Reads::new(),
            views: Vec::new(),
            other: true,
        }
    }
}

impl FieldReads {
    /// Adds what `other` read, each once (a walk's and its parts', [`crate::activation`]).
    pub fn extend(&mut self, other: &FieldReads) {
        self.fields.extend(other.fields.iter().cloned());
        let fields = first_of_each(&mut self.fields);
        self.fields.truncate(fields);
        self.views.extend(other.views.iter().copied());
        let views = first_of_each(&mut self.views);
        self.views.truncate(views);
        self.other |= other.other;
    }
}

/// The fields a value read.
pub type Reads = SmallVec<[Arc<str>; 2]>;

#[derive(Default)]
struct Recording {
    fields: Reads,
    views: Vec<View>,
    other: bool,
}

thread_local! {
    static STACK: RefCell<Vec<Recording>> = const { RefCell::new(Vec::new()) };
}

/// Records the reads of one field's computation until [`Recorder::finish`] (or its drop, when
/// the computation unwinds).
pub(crate) struct Recorder {
    done: bool,
}

impl Recorder {
    pub(crate) fn start() -> Recorder {
        STACK.with(|s| s.borrow_mut().push(Recording::default()));
        Recorder { done: false }
    }

    pub(crate) fn finish(mut self) -> FieldReads {
        self.done = true;
        let mut recording = STACK.with(|s| s.borrow_mut().pop()).unwrap_or_default();
        let fields = first_of_each(&mut recording.fields);
        recording.fields.truncate(fields);
        let views = first_of_each(&mut recording.views);
        recording.views.truncate(views);
        FieldReads {
            fields: recording.fields,
            views: recording.views,
            other: recording.other,
        }
    }
}

/// `list` with each value kept once, where it first stands (a field's tags).
pub(crate) fn kept_once<T: Eq + std::hash::Hash + Clone>(mut list: Vec<T>) -> Vec<T> {
    let kept = first_of_each(&mut list);
    list.truncate(kept);
    list
}

/// Keeps each value of `list` once, where it first stands, at the front, and says how many: the
/// rest is to be cut. A field reads a few others and a view or two, and has a few tags: a scan
/// beats a hash set, which stays for long lists (a scan of those would be quadratic).
fn first_of_each<T: Eq + std::hash::Hash + Clone>(list: &mut [T]) -> usize {
    let mut kept = 0;
    if list.len() > 16 {
        let mut seen = rustc_hash::FxHashSet::default();
        for i in 0..list.len() {
            if seen.insert(list[i].clone()) {
                list.swap(kept, i);
                kept += 1;
            }
        }
    } else {
        for i in 0..list.len() {
            if !list[..kept].contains(&list[i]) {
                list.swap(kept, i);
                kept += 1;
            }
        }
    }
    kept
}

impl Drop for Recorder {
    fn drop(&mut self) {
        if !self.done {
            STACK.with(|s| s.borrow_mut().pop());
        }
    }
}

/// The recording of the field being computed, if one is.
fn on_top(record: impl FnOnce(&mut Recording)) {
    STACK.with(|s| {
        if let Some(top) = s.borrow_mut().last_mut() {
            record(top);
        }
    });
}

/// The field being computed read field `id`.
pub(crate) fn field(id: &Arc<str>) {
    on_top(|top| top.fields.push(id.clone()));
}

/// The field being computed read the view `view`.
pub(crate) fn view(view: View) {
    on_top(|top| top.views.push(view));
}

/// The field being computed read something other than a field or a view.
pub(crate) fn other() {
    on_top(|top| top.other = true);
}
