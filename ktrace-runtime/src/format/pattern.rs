//! Region-name patterns: a name of the region table, or a glob in which `*`
//! matches any run of characters. The export filter's region list and the
//! analysis's wait patterns both match names through [`NamePattern`].

/// A pattern over region names, borrowed from its text: `*` matches any
/// run of characters (none included) and every other character itself, so
/// a pattern without `*` matches only the name it spells.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NamePattern<'a> {
    text: &'a str,
}

impl<'a> NamePattern<'a> {
    /// The pattern `text`, as given (`wait*`, `load`).
    pub fn new(text: &'a str) -> Self {
        NamePattern { text }
    }

    /// Whether the pattern holds a `*`: it may match several names.
    pub fn is_glob(&self) -> bool {
        self.text.contains('*')
    }

    /// Whether `name` matches the pattern.
    pub fn matches(&self, name: &str) -> bool {
        let mut parts = self.text.split('*');
        // No `*`: the whole name.
        let first = parts.next().unwrap_or("");
        let Some(mut rest) = name.strip_prefix(first) else {
            return false;
        };
        let middle: Vec<&str> = parts.collect();
        let Some((last, middle)) = middle.split_last() else {
            return rest.is_empty();
        };
        for m in middle {
            match rest.find(m) {
                Some(i) => rest = &rest[i + m.len()..],
                None => return false,
            }
        }
        rest.len() >= last.len() && rest.ends_with(last)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        for (p, n, m) in [
            ("wait", "wait", true),
            ("wait", "wait_full", false),
            ("wait*", "wait_full", true),
            ("wait*", "wait", true),
            ("*full", "wait_full", true),
            ("*", "", true),
            ("w*t*l", "wait_full", true),
            ("w*t*l", "wait_fulx", false),
            ("a*a", "a", false),
            ("a*a", "aa", true),
            ("*_*", "load", false),
        ] {
            assert_eq!(NamePattern::new(p).matches(n), m, "{p} {n}");
        }
    }

    #[test]
    fn a_pattern_knows_whether_it_is_a_glob() {
        assert!(NamePattern::new("wait*").is_glob());
        assert!(!NamePattern::new("wait").is_glob());
    }
}
