//! Damaged files.

use crate::fixtures::Fixture;

pub fn all() -> Vec<Fixture> {
    vec![]
}
