package io.kinesisspark

import java.util.Locale

/**
 * Options the source does not read are not errors (Spark passes every option of a reader through), but a typo
 * such as `initalPosition` must not pass silently: each unknown name gets a warning with the closest known names.
 *
 * {{{
 *   UnknownOptions.warnings(Set("initalPosition", "streamName"))
 *   // Seq("Option 'initalPosition' is not a kinesis-spark option and is ignored; did you mean 'initialPosition'?")
 * }}}
 */
object UnknownOptions {
  /**
   * @param known the options of the part that reads them: the source's by default, [[KinesisOptionKeys.SinkAll]]
   *              for the sink
   */
  def warnings(optionNames: Iterable[String], known: Seq[String] = KinesisOptionKeys.All): Seq[String] = {
    val byLowerName = known.map(k => k.toLowerCase(Locale.ROOT) -> k).toMap
    optionNames.toSeq.sorted.filterNot(n => byLowerName.contains(n.toLowerCase(Locale.ROOT))).map { name =>
      val close = closest(name, byLowerName)
      val hint = if (close.isEmpty) s"known options: ${known.mkString(", ")}"
                 else s"did you mean ${close.map(c => s"'$c'").mkString(" or ")}?"
      s"Option '$name' is not a kinesis-spark option and is ignored; $hint"
    }
  }

  /** Known names within an edit distance of a third of the name's length (at least 2), nearest first. */
  private def closest(name: String, known: Map[String, String]): Seq[String] = {
    val lower = name.toLowerCase(Locale.ROOT)
    val limit = math.max(2, lower.length / 3)
    val scored = known.toSeq.map { case (k, original) => (editDistance(lower, k), original) }.filter(_._1 <= limit)
    if (scored.isEmpty) Nil else { val best = scored.map(_._1).min; scored.filter(_._1 == best).map(_._2).sorted }
  }

  private def editDistance(a: String, b: String): Int = {
    var previous = Array.tabulate(b.length + 1)(identity)
    for (i <- 1 to a.length) {
      val current = new Array[Int](b.length + 1)
      current(0) = i
      for (j <- 1 to b.length) {
        val substitution = previous(j - 1) + (if (a(i - 1) == b(j - 1)) 0 else 1)
        current(j) = math.min(substitution, math.min(previous(j), current(j - 1)) + 1)
      }
      previous = current
    }
    previous(b.length)
  }
}
