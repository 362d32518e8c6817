// What the awslabs README leaves to its reader: the endpoint, the folder watched for STOP_LOCK, and the imports its
// shutdown example uses. Values come from the environment test_awslabs_migration.py sets.
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileContext, Path}
import org.apache.spark.sql.streaming.StreamingQuery

val endpointUrl = sys.env("AWSLABS_ENDPOINT_URL")
val writeToDir = sys.env("AWSLABS_STOP_DIR")
