//! A table shared across the process that keeps at most a given number of entries: what calls make
//! again and again out of the rulesets' own texts (a member name, a roll item's source, a roll
//! summary's plan), made once. Untrusted input can fill it, never grow it: once it is full, what it
//! doesn't hold is made anew at each ask. Read under a read lock, so that a service's threads look
//! up side by side; only an entry it will keep takes the write lock.

use std::borrow::Borrow;
use std::hash::Hash;
use std::sync::RwLock;

use rustc_hash::FxHashMap;

/// At most `most` entries, kept for the life of the process.
pub struct BoundedTable<K, V> {
    entries: RwLock<Option<FxHashMap<K, V>>>,
    most: usize,
}

impl<K: Hash + Eq, V: Clone> BoundedTable<K, V> {
    pub const fn new(most: usize) -> BoundedTable<K, V> {
        BoundedTable {
            entries: RwLock::new(None),
            most,
        }
    }

    /// The value kept for `key`, else the one `make` makes (with its key, equal to `key`), kept
    /// while the table has room.
    #[inline]
    pub fn get_or_make<Q>(&self, key: &Q, make: impl FnOnce() -> (K, V)) -> V
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let full = match self.entries.read() {
            Ok(entries) => match entries.as_ref() {
                Some(entries) => {
                    if let Some(found) = entries.get(key) {
                        return found.clone();
                    }
                    entries.len() >= self.most
                }
                None => false,
            },
            Err(_) => true,
        };
        // A full table takes no more: no write lock for what it won't keep.
        if full {
            return make().1;
        }
        self.keep(key, make)
    }

    /// A new entry: made before the write lock, so the others wait only for the insertion (two
    /// threads may make the same entry, and the first one kept serves both).
    #[inline(never)]
    fn keep<Q>(&self, key: &Q, make: impl FnOnce() -> (K, V)) -> V
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let (made_key, value) = make();
        let Ok(mut entries) = self.entries.write() else {
            return value;
        };
        let entries = entries.get_or_insert_with(FxHashMap::default);
        if let Some(found) = entries.get(key) {
            return found.clone();
        }
        if entries.len() < self.most {
            entries.insert(made_key, value.clone());
        }
        value
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_what_it_has_room_for_and_makes_the_rest_anew() {
        let table: BoundedTable<Box<str>, usize> = BoundedTable::new(2);
        let mut made = 0;
        let mut ask = |k: &str| {
            table.get_or_make(k, || {
                made += 1;
                (k.into(), made)
            })
        };
        assert_eq!(ask("a"), 1);
        assert_eq!(ask("b"), 2);
        // Kept: asked again, the same value, nothing made.
        assert_eq!(ask("a"), 1);
        // Full: made at each ask, never kept.
        assert_eq!(ask("c"), 3);
        assert_eq!(ask("c"), 4);
        // The first two stay kept.
        assert_eq!((ask("a"), ask("b")), (1, 2));
    }
}
