package io.kinesisspark

import java.nio.charset.StandardCharsets
import java.util.UUID

import scala.util.control.NonFatal

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileContext, FileSystem, Options, Path, UnsupportedFileSystemException}

/**
 * One small file the source keeps in its checkpoint directory, read and written whole. A write goes to a hidden file
 * beside it first and is then renamed into place, so a crash never leaves a half-written file behind (as Spark writes
 * its own checkpoint files).
 *
 * @param holds what the file holds, for errors ("Cannot write <holds> to <path>")
 *
 * {{{
 *   val file = new CheckpointFile(checkpointLocation, "kinesis-initial-offset.json", hadoopConf, "the start offset")
 *   file.read()                            // None until written
 *   file.create("{...}")                   // false: another attempt of the query wrote it first
 *   file.replace("{...}")                  // over what is there
 * }}}
 */
private[kinesisspark] final class CheckpointFile(checkpointLocation: String, name: String, hadoopConf: Configuration,
    holds: String) {
  val path = new Path(checkpointLocation, name)

  /** The file's text, if it exists. */
  def read(): Option[String] = {
    val fs = path.getFileSystem(hadoopConf)
    if (!fs.exists(path)) None else {
      val in = fs.open(path)
      try Some(new String(in.readAllBytes(), StandardCharsets.UTF_8)) finally in.close()
    }
  }

  /** Writes `text` unless the file exists; false when it did (what is there is left as it is). */
  def create(text: String): Boolean = writeAside(text) { (fs, tmp) =>
    fs.rename(tmp, path) || {
      if (!fs.exists(path)) throw new KinesisSparkException(s"Cannot write $holds to $path")
      false
    }
  }

  /** Writes `text` over what the file holds: at once where the file system can rename over a file. */
  def replace(text: String): Unit = writeAside(text) { (fs, tmp) =>
    try FileContext.getFileContext(path.toUri, hadoopConf).rename(tmp, path, Options.Rename.OVERWRITE)
    catch {
      case _: UnsupportedFileSystemException =>
        // No atomic replace here: a crash between the two steps leaves no file (callers say what that means).
        fs.delete(path, false)
        if (!fs.rename(tmp, path)) throw new KinesisSparkException(s"Cannot write $holds to $path")
    }
    true
  }

  private def writeAside(text: String)(move: (FileSystem, Path) => Boolean): Boolean = {
    val fs = path.getFileSystem(hadoopConf)
    val tmp = new Path(checkpointLocation, s".$name.${UUID.randomUUID()}.tmp")
    try {
      val out = fs.create(tmp, true)
      try out.write(text.getBytes(StandardCharsets.UTF_8)) finally out.close()
      move(fs, tmp)
    } finally {
      // A leftover is harmless (hidden, and never read): a failure to remove it must not hide the write's own.
      try if (fs.exists(tmp)) fs.delete(tmp, false) catch { case NonFatal(_) => () }
    }
  }
}
