package io.kinesisspark

import org.scalatest.funsuite.AnyFunSuite

class UnknownOptionsSuite extends AnyFunSuite {
  test("known options, in any case, give no warning") {
    assert(UnknownOptions.warnings(Seq("streamName", "INITIALPOSITION", "maxfetchrate")).isEmpty)
  }

  test("a typo names the option and the closest known one") {
    assert(UnknownOptions.warnings(Seq("initalPosition")) ==
      Seq("Option 'initalPosition' is not a kinesis-spark option and is ignored; did you mean 'initialPosition'?"))
    assert(UnknownOptions.warnings(Seq("streamname ")).head.contains("did you mean 'streamName'?"))
    assert(UnknownOptions.warnings(Seq("maxRecordPerTrigger")).head.contains("'maxRecordsPerTrigger'"))
  }

  test("a name far from every known one lists the known options") {
    val w = UnknownOptions.warnings(Seq("kinesis.metadataCommitterType"))
    assert(w.size == 1 && w.head.contains("known options: streamName, region"))
  }
}
