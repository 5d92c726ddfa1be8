//! Tests of rendering on small repositories.
