//! Each dialect's `convertToLlm`, one folder per dialect (`dialect/pi/`, `dialect/omp/`).

pub mod omp;
