//! Page-mapping FTL. TODO(helper A)
use crate::config::SsdConfig;
use crate::flash::Flash;

pub struct PageFtl {}

impl PageFtl {
    pub fn new(_cfg: &SsdConfig, _flash: &Flash) -> PageFtl {
        todo!()
    }
}

impl super::Ftl for PageFtl {
    fn kind(&self) -> crate::FtlKind {
        todo!()
    }
    fn logical_pages(&self) -> u64 {
        todo!()
    }
    fn write(
        &mut self,
        _f: &mut Flash,
        _l: crate::Lpn,
        _s: crate::StreamId,
        _d: crate::PageWrite,
        _n: crate::SimTime,
    ) -> Result<crate::SimTime, crate::SsdError> {
        todo!()
    }
    fn read(
        &mut self,
        _f: &mut Flash,
        _l: crate::Lpn,
        _n: crate::SimTime,
    ) -> Result<(crate::SimTime, Option<crate::Ppn>), crate::SsdError> {
        todo!()
    }
    fn trim(
        &mut self,
        _f: &mut Flash,
        _l: crate::Lpn,
        _n: crate::SimTime,
    ) -> Result<crate::SimTime, crate::SsdError> {
        todo!()
    }
    fn mapping_bytes(&self) -> u64 {
        todo!()
    }
    fn verify(&self, _f: &Flash) -> Result<(), crate::InvariantError> {
        todo!()
    }
}
