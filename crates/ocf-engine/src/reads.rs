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

/// A field's reads. Not part of the field's value: two values that differ only in what they read
/// are equal, so that salsa's backdating is unchanged.
#[derive(Debug, Clone, Default)]
pub struct FieldReads {
    /// The fields read, each once, in the order first read. (Vectors as recorded: a value is
    /// shared behind its `Arc` and never copied, so nothing is gained by another allocation.)
    pub fields: Vec<Arc<str>>,
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
    Copy(crate::input::CopyInput),
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
            fields: Vec::new(),
            views: Vec::new(),
            other: true,
        }
    }
}

#[derive(Default)]
struct Recording {
    fields: Vec<Arc<str>>,
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
        let recording = STACK.with(|s| s.borrow_mut().pop()).unwrap_or_default();
        FieldReads {
            fields: first_of_each(recording.fields),
            views: first_of_each(recording.views),
            other: recording.other,
        }
    }
}

/// `list` with each value kept once, where it first stands. A field reads a few others and a view
/// or two: a scan beats a hash set, which stays for long lists.
fn first_of_each<T: Eq + std::hash::Hash + Clone>(mut list: Vec<T>) -> Vec<T> {
    if list.len() > 16 {
        let mut seen = rustc_hash::FxHashSet::default();
        list.retain(|x| seen.insert(x.clone()));
    } else {
        let mut kept = 0;
        for i in 0..list.len() {
            if !list[..kept].contains(&list[i]) {
                list.swap(kept, i);
                kept += 1;
            }
        }
        list.truncate(kept);
    }
    list
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
